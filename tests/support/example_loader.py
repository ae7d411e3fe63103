"""Import an example file afresh, as a user who copied it would run it.

Each load is a new module (its state, a store say, is its own), under a name of its
own in ``sys.modules``.
"""

from __future__ import annotations

import importlib.util
import sys
import uuid
from pathlib import Path
from types import ModuleType

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

__all__ = ["EXAMPLES", "load"]


def load(name: str) -> ModuleType:
    """Import ``examples/<name>.py`` under a unique module name."""
    module_name = f"example_{name}_{uuid.uuid4().hex}"
    spec = importlib.util.spec_from_file_location(module_name, EXAMPLES / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module

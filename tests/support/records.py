"""The classes ``import trio_mcp`` builds that take one of ``trio_mcp._records``' methods."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import trio_mcp  # noqa: F401 - loads every module whose classes are looked at


def classes_using(method: str, shared: Callable[..., Any]) -> list[type]:
    """Every trio_mcp class whose own ``method`` is ``shared``, sorted by qualified name."""
    found: dict[str, type] = {}
    for name, module in list(sys.modules.items()):
        if name.startswith("trio_mcp"):
            for value in vars(module).values():
                if isinstance(value, type) and value.__dict__.get(method) is shared:
                    found[f"{value.__module__}.{value.__qualname__}"] = value
    return [found[name] for name in sorted(found)]

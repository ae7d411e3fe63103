"""Find the Server a command line names: ``package.module:attr`` or ``path/file.py:attr``.

The attribute may be a ``Server`` or a function of no arguments returning one, so a
module can build its server lazily.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
from pathlib import Path

from .._server import Server

__all__ = ["LoadError", "load_server"]


class LoadError(Exception):
    """The target could not be imported or is not a Server."""


def load_server(target: str) -> Server:
    """Import ``target`` and return its Server.

    Raises:
        LoadError: with a message that says what to fix.
    """
    module_part, sep, attr = target.partition(":")
    if not sep:
        attr = "server"
    if not module_part:
        raise LoadError(f"{target!r}: name a module, as 'package.module:server'")
    if module_part.endswith(".py") or os.sep in module_part:
        path = Path(module_part).resolve()
        if not path.is_file():
            raise LoadError(f"{target!r}: no file {path}")
        name = f"_trio_mcp_target_{path.stem}"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise LoadError(f"{target!r}: cannot import {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        sys.path.insert(0, str(path.parent))
        spec.loader.exec_module(module)
    else:
        if "" not in sys.path and os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        try:
            module = importlib.import_module(module_part)
        except ModuleNotFoundError as exc:
            raise LoadError(
                f"{target!r}: cannot import {module_part!r} ({exc})"
            ) from exc
    try:
        obj = getattr(module, attr)
    except AttributeError:
        raise LoadError(
            f"{target!r}: module {module_part!r} has no attribute {attr!r}"
        ) from None
    if not isinstance(obj, Server) and callable(obj):
        if inspect.iscoroutinefunction(obj):
            raise LoadError(
                f"{target!r}: {attr!r} is an async function; name the Server itself "
                "or a plain function returning one"
            )
        obj = obj()
    if not isinstance(obj, Server):
        raise LoadError(
            f"{target!r}: {attr!r} is {type(obj).__name__}, not a trio_mcp.Server"
        )
    return obj

"""Find the Server a command line names: ``package.module:attr`` or ``path/file.py:attr``.

The attribute may be a ``Server``, a function of no arguments returning one (sync
or async), or an async context manager function yielding one: the lifespan, which
opens what the server needs (a database pool) before the first request and closes
it after the last. ``open_server`` handles all of them the same way.

Nothing here prints: failures are ``LoadError`` values whose message says what to
fix; the command line decides whether to show the traceback (``--debug``). The
target loads with its declaration problems collected (``collecting_problems``), so
a module with several bad declarations is reported whole, in one run.
"""

from __future__ import annotations

import contextlib
import difflib
import importlib
import importlib.util
import inspect
import os
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from trio_mcp import InvalidDeclaration, McpError, Server

from .._declare._collect import collecting_problems

__all__ = ["CliError", "LoadError", "absolute_target", "load_server", "open_server"]


class CliError(Exception):
    """A command cannot go on; the message says what to do (exit status 2)."""


class LoadError(CliError):
    """The target could not be imported or does not give a Server."""


def split_target(target: str) -> tuple[str, str]:
    """Return ``(module or path, attribute)``; the attribute defaults to ``server``."""
    module_part, sep, attr = target.rpartition(":")
    if not sep or os.sep in attr or attr.endswith(".py"):
        # No colon, or a colon inside a Windows-style path: the whole is the module.
        return target, "server"
    if not module_part:
        raise LoadError(f"{target!r}: name a module, as 'package.module:server'")
    return module_part, attr


def _is_path(module_part: str) -> bool:
    return module_part.endswith(".py") or os.sep in module_part


def absolute_target(target: str) -> str:
    """Return ``target`` with a file path made absolute, for a host that runs elsewhere."""
    module_part, attr = split_target(target)
    if _is_path(module_part):
        return f"{Path(module_part).resolve()}:{attr}"
    return f"{module_part}:{attr}"


def _import_file(target: str, module_part: str) -> ModuleType:
    path = Path(module_part).resolve()
    if not path.is_file():
        raise LoadError(f"{target!r}: no file {path}")
    # Named after the file, as `python file.py` users expect in messages
    # ("server:forecast"); prefixed only when that name is taken already.
    name = path.stem
    if not name.isidentifier() or name in sys.modules:
        name = f"_trio_mcp_target_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if (
        spec is None or spec.loader is None
    ):  # pragma: no cover - a .py file always has one
        raise LoadError(f"{target!r}: cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
    spec.loader.exec_module(module)
    return module


def _import(target: str, module_part: str) -> ModuleType:
    try:
        if _is_path(module_part):
            return _import_file(target, module_part)
        if os.getcwd() not in sys.path and "" not in sys.path:
            sys.path.insert(0, os.getcwd())
        return importlib.import_module(module_part)
    except LoadError:
        raise
    except ModuleNotFoundError as exc:
        if exc.name is not None and module_part.startswith(exc.name):
            raise LoadError(
                f"{target!r}: no module named {exc.name!r}; run from the directory "
                "that holds it, or name the file as 'path/file.py:attr'"
            ) from exc
        raise _failed(target, "importing it", exc) from exc
    except Exception as exc:
        raise _failed(target, "importing it", exc) from exc


def _failed(target: str, doing: str, exc: BaseException) -> LoadError:
    if isinstance(exc, McpError):
        return LoadError(f"{target!r}: {exc}")
    where = ""
    tb = exc.__traceback__
    while tb is not None:
        where = f" at {tb.tb_frame.f_code.co_filename}:{tb.tb_lineno}"
        tb = tb.tb_next
    return LoadError(
        f"{target!r}: {doing} raised {type(exc).__name__}: {exc}{where} "
        "(run with --debug for the traceback)"
    )


def resolve(target: str) -> Any:
    """Import the target's module and return the named attribute, unchecked."""
    module_part, attr = split_target(target)
    module = _import(target, module_part)
    try:
        return getattr(module, attr)
    except AttributeError:
        raise LoadError(
            f"{target!r}: module {module_part!r} has no attribute {attr!r}"
            + _did_you_mean(module, module_part, attr)
        ) from None


def _did_you_mean(module: ModuleType, module_part: str, attr: str) -> str:
    """Suggest the module's Servers (or a close name), as ``file.py:NAME``."""
    servers = [
        name
        for name, value in vars(module).items()
        if isinstance(value, Server) and not name.startswith("_")
    ]
    names = servers or difflib.get_close_matches(attr, list(vars(module)), n=3)
    if not names:
        return "; it defines no Server at module level"
    options = " or ".join(f"'{module_part}:{name}'" for name in names)
    return f"; did you mean {options}?"


def _check(target: str, obj: object, what: str) -> Server:
    if not isinstance(obj, Server):
        raise LoadError(
            f"{target!r}: {what} is {type(obj).__name__}, not a trio_mcp.Server; "
            "name a Server, a function returning one, or an async context manager "
            "function yielding one"
        )
    return obj


@contextlib.asynccontextmanager
async def open_server(target: str) -> AsyncIterator[Server]:
    """Load ``target`` and yield its Server, running its lifespan around the body.

    Raises:
        LoadError: if the target cannot be imported, is not one of the accepted
            kinds, or its factory or lifespan fails before yielding a Server.
    """
    with _collected(target):
        obj = resolve(target)
        attr = split_target(target)[1]
        made: Any = obj
        if not isinstance(obj, Server):
            if not callable(obj):
                _check(target, obj, repr(attr))
            made = await _made(target, attr, obj)
    if isinstance(made, Server):
        yield made
        return
    if not hasattr(made, "__aenter__"):
        yield _check(target, made, f"what {attr!r} returned")
        return
    async with _entered(target, attr, made) as server:
        yield server


async def _made(target: str, attr: str, factory: Any) -> Any:
    """What a factory returns (awaited) or a lifespan function gives."""
    try:
        made = factory()
        if inspect.isawaitable(made):
            made = await made
    except (LoadError, McpError) as exc:
        raise LoadError(f"{target!r}: {exc}") from exc
    except Exception as exc:
        raise _failed(target, f"calling {attr!r}", exc) from exc
    return made


@contextlib.contextmanager
def _collected(target: str) -> Iterator[None]:
    """Load inside ``collecting_problems()``; fail with every problem found.

    The Server's own report comes first (in catalog order), then the declarations
    refused while loading that it was not given: what ``python file.py`` would
    have raised at the first of them.

    Raises:
        LoadError: caused by one ``InvalidDeclaration`` listing them all.
    """
    with collecting_problems() as refused:
        try:
            yield
        except LoadError as exc:
            reported = exc.__cause__
            if not (refused and isinstance(reported, InvalidDeclaration)):
                raise
            problems = [*reported.problems]
            problems += [p for p in refused if p not in reported.problems]
            cause = InvalidDeclaration(problems)
            raise LoadError(f"{target!r}: {cause}") from cause
    if refused:
        cause = InvalidDeclaration(refused)
        raise LoadError(f"{target!r}: {cause}") from cause


@contextlib.asynccontextmanager
async def _entered(target: str, attr: str, manager: Any) -> AsyncIterator[Server]:
    """Enter a lifespan, turning a failure before it yields into ``LoadError``."""
    try:
        server = await manager.__aenter__()
    except Exception as exc:
        raise _failed(target, f"starting the lifespan {attr!r}", exc) from exc
    try:
        checked = _check(target, server, f"what the lifespan {attr!r} yielded")
    except LoadError:
        await manager.__aexit__(None, None, None)
        raise
    async with contextlib.AsyncExitStack() as stack:
        stack.push_async_exit(manager)
        yield checked


def load_server(target: str) -> Server:
    """Load a Server synchronously (a Server or a sync factory), for quick checks.

    Raises:
        LoadError: if the target is an async factory or a lifespan (use
            ``open_server`` under Trio), or cannot be loaded.
    """
    what = "what it returned"
    with _collected(target):
        obj = resolve(target)
        if isinstance(obj, Server) or not callable(obj):
            made, what = obj, repr(split_target(target)[1])
        elif inspect.iscoroutinefunction(obj) or inspect.isasyncgenfunction(obj):
            raise LoadError(
                f"{target!r}: is async; open it with open_server under Trio"
            )
        else:
            try:
                made = obj()
            except (McpError, LoadError) as exc:
                raise LoadError(f"{target!r}: {exc}") from exc
            except Exception as exc:
                raise _failed(target, "calling it", exc) from exc
    return _check(target, made, what)

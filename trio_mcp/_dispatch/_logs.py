"""Whether any declaration of a catalog logs: the ``logging`` capability (F14).

A server advertises ``logging`` only when something it serves can send
``notifications/message`` (issue 44): a handler that calls ``.log(...)`` (on
``ToolContext.current()`` or a context parameter), in its own code, in a function
nested in it, or in a function of its module it calls (followed a few calls deep);
a hand-written adopter's ``dispatch``/``read``/``get`` likewise; and any middleware
step. The test is the attribute name ``log`` in the compiled code: a handler that
never names it cannot log through the context, and one that names it for something
else only makes the server advertise what it may not use (harmless). What no code
object shows (a builtin, a C extension) is counted as logging.
"""

from __future__ import annotations

import types
from collections.abc import Iterable
from typing import Final

__all__ = ["may_log"]

#: How many calls deep a handler's module-level helpers are followed.
_DEPTH: Final = 3
_HANDLERS: Final = ("fn", "dispatch", "read", "get")


def may_log(declarations: Iterable[object]) -> bool:
    """Whether any of ``declarations`` (declared functions, adopters, middleware
    steps) can call ``.log(...)``."""
    seen: set[types.CodeType] = set()
    return any(_logs(_function_of(d), seen, _DEPTH) for d in declarations)


def _function_of(declaration: object) -> object:
    """The code to read: a declaration's function, an adopter's method, or itself."""
    for name in _HANDLERS:
        found = getattr(declaration, name, None)
        if callable(found):
            return found
    return declaration


def _logs(function: object, seen: set[types.CodeType], depth: int) -> bool:
    inner = _unwrapped(function)
    code = getattr(inner, "__code__", None)
    if not isinstance(code, types.CodeType):
        return True  # no code to read (a builtin, a C extension): assume it logs
    namespace = getattr(inner, "__globals__", {})
    return _code_logs(code, namespace, seen, depth)


def _unwrapped(function: object) -> object:
    """The Python function behind a bound method, a ``functools.partial``, a
    decorated function or a callable object."""
    for _ in range(8):
        if hasattr(function, "__code__"):
            return function
        inner = (
            getattr(function, "__func__", None)
            or getattr(function, "func", None)
            or getattr(function, "__wrapped__", None)
            or next(
                (
                    vars(k)["__call__"]
                    for k in type(function).__mro__
                    if "__call__" in vars(k)
                ),
                None,
            )
        )
        if inner is None or inner is function:
            return function
        function = inner
    return function


def _code_logs(
    code: types.CodeType,
    namespace: dict[str, object],
    seen: set[types.CodeType],
    depth: int,
) -> bool:
    if code in seen:
        return False
    seen.add(code)
    if "log" in code.co_names:
        return True
    for const in code.co_consts:  # nested functions, lambdas, comprehensions
        if isinstance(const, types.CodeType) and _code_logs(
            const, namespace, seen, depth
        ):
            return True
    if depth == 0:
        return False
    helpers = (namespace.get(name) for name in code.co_names)
    return any(
        isinstance(helper, types.FunctionType) and _logs(helper, seen, depth - 1)
        for helper in helpers
    )

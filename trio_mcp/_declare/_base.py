"""What every declaration shares: binding to an instance, direct calls, running.

A declaration is a descriptor: ``desk.search_tickets`` is a copy bound to ``desk``,
still callable with the function's own arguments. Running a handler is uniform:
async functions are awaited, sync ones run in a worker thread so they never block
other requests.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Generic, ParamSpec, TypeVar

from .._authority import Capability, closure, register_in
from .._errors import InvalidDeclaration
from .._units import Seconds, seconds
from ._signature import (
    CONTEXT_HINT,
    declaration_id,
    holds_write_only,
    is_method,
    resolve_hints,
)
from ._threads import thread_budget, worker_threads

__all__ = ["Declaration", "declared_seconds", "where_of", "worker_threads"]


def where_of(kind: str, fn: object, shown: str | None) -> str:
    """How every declaration problem begins: ``tool 'name' (module:qualname)``.

    ``shown`` is the wire name (a resource's URI); None means the function's name.

    Raises:
        InvalidDeclaration: if ``fn`` is not a function (there is nothing to name).
    """
    if isinstance(fn, staticmethod | classmethod):
        raise InvalidDeclaration(
            f"@{kind} goes above @staticmethod/@classmethod, or on a plain function"
        )
    if not callable(fn):
        raise InvalidDeclaration(f"@{kind} needs a function, got {fn!r}")
    name = shown if shown is not None else getattr(fn, "__name__", repr(fn))
    return f"{kind} '{name}' ({declaration_id(fn)})"


def declared_seconds(value: Seconds | None, *, what: str) -> float | None:
    """A declaration's duration (``timeout=``, ``ttl=``): finite seconds or None.

    Raises:
        InvalidDeclaration: for NaN, infinity, a negative or non-numeric value,
            which would break every call rather than this one.
    """
    try:
        return seconds(value, what=what, finite=True)
    except (TypeError, ValueError) as exc:
        raise InvalidDeclaration(
            f"{exc} (got {value!r}); give finite, non-negative seconds or a "
            "timedelta, or None for no limit"
        ) from None


P = ParamSpec("P")
R = TypeVar("R")

_UNBOUND: Any = object()


class Declaration(Generic[P, R]):
    """Base of ``Tool``, ``Resource`` and ``Prompt``: a handler plus its wire entry."""

    kind: ClassVar[str]

    def __init__(
        self,
        fn: Callable[P, R],
        *,
        name: str | None,
        title: str | None,
        caps: Sequence[Capability],
        timeout: Seconds | None,
    ) -> None:
        #: How this declaration's problems begin (``where_of``).
        self.where = where_of(self.kind, fn, self._shown(name, fn))
        self.fn = fn
        self.declaration = declaration_id(fn)
        self.name = name if name is not None else fn.__name__
        self.title = title
        caps = tuple(caps)
        for cap in caps:
            if not isinstance(cap, Capability):
                raise InvalidDeclaration(
                    f"{self.where}: caps= takes Capability values, got {cap!r}"
                )
        self.caps: tuple[Capability, ...] = caps
        #: Every capability a call needs: ``caps`` and what they require, transitively.
        self.required: frozenset[str] = closure(caps)
        #: Whether decoded arguments may hold a ``Secret`` (then they are registered).
        self.holds_secrets = False
        self.timeout = declared_seconds(timeout, what=f"{self.where}: timeout")
        if self.timeout == 0:
            raise InvalidDeclaration(
                f"{self.where}: timeout must be more than 0 seconds, or None "
                "for no limit (a zero deadline would end every call at once)"
            )
        self.is_async = inspect.iscoroutinefunction(fn)
        #: ``fn``'s signature, read once for ``is_method`` and the inputs.
        self.signature = inspect.signature(fn)
        self.is_method = is_method(fn, self.signature)
        self._instance: object = _UNBOUND
        functools.update_wrapper(self, fn)
        self._prepared = False
        self._try_prepare()

    # -- preparation ------------------------------------------------------------
    def _try_prepare(self) -> None:
        """Derive schemas now; a name not yet defined postpones it to the Server."""
        try:
            hints = resolve_hints(self.fn)
        except NameError:
            return
        self._prepare(hints)
        self._after_prepare()

    def ensure_prepared(self) -> None:
        """Derive schemas if not done yet.

        Raises:
            InvalidDeclaration: if an annotation cannot be resolved or is unsupported.
        """
        if self._prepared:
            return
        try:
            hints = resolve_hints(self.fn)
        except NameError as exc:
            hint = "define or import it before building the Server"
            if exc.name in ("Context", "ToolContext"):
                hint += (
                    f"; if it is a call context: it is not an argument{CONTEXT_HINT}"
                )
            raise InvalidDeclaration(
                f"{self.where}: annotation names something undefined ({exc}); {hint}"
            ) from None
        self._prepare(hints)
        self._after_prepare()

    def _after_prepare(self) -> None:
        plan = getattr(self, "plan", None)
        # A secret's schema is the only one marked writeOnly.
        self.holds_secrets = plan is not None and holds_write_only(plan.input_schema)
        self._prepared = True

    def _prepare(self, hints: dict[str, object]) -> None:
        raise NotImplementedError

    def _shown(self, name: str | None, fn: object) -> str | None:
        """The name problems show (a resource shows its URI); None: ``fn``'s."""
        return name

    def problems(self) -> list[str]:
        """Return what must be fixed before a Server may serve this declaration."""
        found: list[str] = []
        if self.is_method and self._instance is _UNBOUND:
            found.append(
                f"{self.where}: is a method; list the bound method "
                f"(for example 'obj.{self.fn.__name__}'), not the function"
            )
        return found

    # -- binding and direct calls ----------------------------------------------
    def __get__(self, instance: object, owner: type | None = None) -> Any:
        if instance is None or not self.is_method:
            return self
        bound = object.__new__(type(self))
        bound.__dict__.update(self.__dict__)
        bound._instance = instance
        return bound

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        if self.is_method and self._instance is not _UNBOUND:
            return self.fn(self._instance, *args, **kwargs)  # type: ignore[arg-type]
        return self.fn(*args, **kwargs)

    @property
    def bound_to(self) -> object | None:
        """The instance a method declaration is bound to, if any."""
        return None if self._instance is _UNBOUND else self._instance

    async def run(self, kwargs: dict[str, object]) -> object:
        """Run the handler with decoded keyword arguments.

        Sync handlers run in a worker thread (``trio.to_thread.run_sync``); on
        cancellation the thread is abandoned and finishes on its own.

        Raises:
            ThreadsExhausted: if too many abandoned threads are still running.
        """
        if self.holds_secrets:
            # Secret defaults were built outside the call: register them for redaction.
            register_in(kwargs)
        fn: Callable[..., Any] = self.fn
        if self.is_method:
            fn = functools.partial(fn, self._instance)
        if self.is_async:
            return await fn(**kwargs)
        return await thread_budget().run(functools.partial(fn, **kwargs))

    def __repr__(self) -> str:
        return f"<{self.kind} {self.name!r} {self.declaration}>"

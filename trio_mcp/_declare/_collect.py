"""Every declaration problem of a module in one report, not one decorator at a time.

A decorator checks its function at once and raises ``InvalidDeclaration`` naming
it: the contract, and what ``python server.py`` shows. A tool that loads a module
to report on it (``trio-mcp check``) wants every problem at once, so it loads the
module inside ``collecting_problems()``: there a refused declaration becomes an
``Unservable`` stand-in that keeps the module importing, holds its problems and
hands them to ``Server(...)``, which raises them in one ``InvalidDeclaration``
with the problems of every other declaration. The block's list also holds them,
for a stand-in that no ``Server`` is given.
"""

from __future__ import annotations

import contextlib
import difflib
from collections.abc import Callable, Collection, Iterator, Mapping
from contextvars import ContextVar
from typing import Any, TypeVar

from .._errors import InvalidDeclaration
from ._base import Declaration, where_of
from ._docstring import describe, undescribed
from ._signature import declaration_id

__all__ = ["Unservable", "check_options", "collecting_problems", "declared"]

#: The problems of the declarations refused inside ``collecting_problems()``.
_COLLECTED: ContextVar[list[str] | None] = ContextVar(
    "trio_mcp_collected_problems", default=None
)

D = TypeVar("D", bound=Declaration[Any, Any])


@contextlib.contextmanager
def collecting_problems() -> Iterator[list[str]]:
    """Within the block, a refused declaration does not raise: its problems are
    kept by its stand-in and appended to the list this yields."""
    collected: list[str] = []
    token = _COLLECTED.set(collected)
    try:
        yield collected
    finally:
        _COLLECTED.reset(token)


def declared(kind: str, fn: Any, make: Callable[[], D], shown: object = None) -> D:
    """``make()``, or an ``Unservable`` holding its problems when collecting.

    ``shown`` is the wire name (``name=``, a resource's ``uri=``), if given.

    Raises:
        InvalidDeclaration: what ``make`` raised, outside ``collecting_problems()``.
    """
    try:
        return make()
    except InvalidDeclaration as exc:
        collected = _COLLECTED.get()
        if collected is None:
            raise
        named = shown if isinstance(shown, str) else None
        problems = [*exc.problems, *_docstring_problems(kind, fn, named)]
        collected.extend(problems)
        return Unservable(kind, fn, tuple(problems))  # type: ignore[return-value]


def _docstring_problems(kind: str, fn: Any, shown: str | None) -> list[str]:
    """A refused declaration's missing description, so that one run lists it too."""
    try:
        where = where_of(kind, fn, shown)
        described = describe(fn)
    except Exception:
        return []
    return [] if described.summary else [undescribed(where, kind)]


def check_options(
    kind: str, fn: Any, options: Mapping[str, object], accepted: Collection[str]
) -> None:
    """Refuse a keyword the decorator does not take, saying what to write instead.

    ``description=`` is a FastMCP habit: here a declaration's description is its
    docstring, which ``trio-mcp check`` also reads for every parameter.

    Raises:
        InvalidDeclaration: naming the declaration and each unknown keyword.
    """
    unknown = [key for key in options if key not in accepted]
    if not unknown:
        return
    where = where_of(kind, fn, None)
    problems = []
    for key in unknown:
        if key == "description":
            problems.append(
                f"{where}: @{kind} takes no description=; a {kind}'s description "
                "is the first paragraph of its docstring, and each parameter's is "
                "its entry under 'Args:' (or Annotated[..., Field(description=...)])"
            )
            continue
        close = difflib.get_close_matches(key, accepted, n=1)
        hint = f"did you mean {close[0]}=? " if close else ""
        problems.append(
            f"{where}: @{kind} has no option {key}=; {hint}it takes "
            + ", ".join(f"{name}=" for name in sorted(accepted))
        )
    raise InvalidDeclaration(problems)


class Unservable(Declaration[Any, Any]):
    """Stands in for a declaration refused while collecting: callable like its
    function, and refused again, with the same problems, by ``Server(...)``."""

    def __init__(self, kind: str, fn: Any, problems: tuple[str, ...]) -> None:
        # Not Declaration.__init__: that is what refused the function.
        self.kind = kind  # type: ignore[misc]
        self.fn = fn
        self.refused = problems
        self.name = str(getattr(fn, "__name__", fn))
        self.declaration = declaration_id(fn) if callable(fn) else repr(fn)
        self.is_method = False
        self._prepared = False

    def ensure_prepared(self) -> None:
        """Raise the problems that refused the declaration.

        Raises:
            InvalidDeclaration: always.
        """
        raise InvalidDeclaration(self.refused)

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        return self

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

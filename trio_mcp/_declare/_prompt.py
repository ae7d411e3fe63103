"""``@prompt``: a function returns prompt messages for the client to show.

Prompt arguments travel as strings, so every parameter is ``str`` or ``str | None``.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Sequence
from typing import Any, ParamSpec, TypeVar, overload

import attrs

from .._authority import Capability
from .._errors import InvalidDeclaration
from .._json import JsonObject, JsonValue
from .._units import Seconds
from ._base import Declaration
from ._content import PromptMessage, TextContent
from ._docstring import describe
from ._replies import MISSING, strip_needs_input

__all__ = ["Prompt", "PromptArgument", "PromptSpec", "prompt"]

P = ParamSpec("P")
R = TypeVar("R")

_ALLOWED_RETURNS = (str, PromptMessage, list[PromptMessage], Sequence[PromptMessage])


@attrs.frozen
class PromptArgument:
    """One argument of a prompt."""

    name: str
    description: str | None
    required: bool

    def to_wire(self) -> JsonObject:
        """Return the protocol's ``PromptArgument``."""
        out: JsonObject = {"name": self.name}
        if self.description is not None:
            out["description"] = self.description
        out["required"] = self.required
        return out


@attrs.frozen(kw_only=True)
class PromptSpec:
    """A prompt's catalog entry, as ``prompts/list`` shows it."""

    name: str
    title: str | None
    description: str | None
    arguments: tuple[PromptArgument, ...]
    declaration: str

    def to_wire(self) -> JsonObject:
        """Return the protocol's ``Prompt``."""
        out: JsonObject = {"name": self.name}
        if self.title is not None:
            out["title"] = self.title
        if self.description is not None:
            out["description"] = self.description
        if self.arguments:
            out["arguments"] = [a.to_wire() for a in self.arguments]
        return out


class Prompt(Declaration[P, R]):
    """A prompt declaration."""

    kind = "prompt"

    def __init__(
        self,
        fn: Callable[P, R],
        *,
        name: str | None = None,
        title: str | None = None,
        caps: Sequence[Capability] = (),
        timeout: Seconds | None = None,
    ) -> None:
        self.described = describe(fn)
        super().__init__(fn, name=name, title=title, caps=caps, timeout=timeout)

    def _prepare(self, hints: dict[str, object]) -> None:
        where = self.declaration
        params = list(inspect.signature(self.fn).parameters.values())
        if self.is_method:
            params = params[1:]
        self.arguments: list[PromptArgument] = []
        self.bad_params: list[str] = []
        for p in params:
            ann = hints.get(p.name, MISSING)
            if ann is not str and ann != (str | None) and ann != typing.Optional[str]:  # noqa: UP045
                self.bad_params.append(p.name)
            self.arguments.append(
                PromptArgument(
                    p.name,
                    self.described.params.get(p.name),
                    p.default is p.empty,
                )
            )
        returns = hints.get("return", MISSING)
        inner = strip_needs_input(returns)
        if inner not in _ALLOWED_RETURNS:
            raise InvalidDeclaration(
                f"{where}: a prompt returns str, PromptMessage or list[PromptMessage]; "
                "annotate the return type with one of them"
            )

    def problems(self) -> list[str]:
        """Return what must be fixed before a Server may serve this prompt."""
        found = super().problems()
        where = f"prompt '{self.name}' ({self.declaration})"
        if not self.described.summary:
            found.append(
                f"{where}: has no description; write a docstring whose first "
                "paragraph says what the prompt is for"
            )
        for name in self.bad_params:
            found.append(
                f"{where}: parameter '{name}' must be 'str' or 'str | None' "
                "(prompt arguments are strings)"
            )
        for arg in self.arguments:
            if arg.description is None:
                found.append(
                    f"{where}: parameter '{arg.name}' has no description; "
                    "document it under 'Args:' in the docstring"
                )
        return found

    def spec(self) -> PromptSpec:
        """Return this prompt's catalog entry."""
        self.ensure_prepared()
        return PromptSpec(
            name=self.name,
            title=self.title,
            description=self.described.summary,
            arguments=tuple(self.arguments),
            declaration=self.declaration,
        )

    def check_arguments(self, arguments: JsonValue) -> list[str]:
        """Return what is wrong with a ``prompts/get`` arguments object (empty if fine)."""
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            return ["arguments must be an object of strings"]
        known = {a.name for a in self.arguments}
        problems = [f"- {k}: unknown argument" for k in arguments if k not in known]
        problems += [
            f"- {k}: expected a string"
            for k, v in arguments.items()
            if k in known and not isinstance(v, str)
        ]
        problems += [
            f"- {a.name}: this argument is required"
            for a in self.arguments
            if a.required and a.name not in arguments
        ]
        return problems

    async def dispatch(self, arguments: JsonValue) -> object:
        """Run the prompt with checked string arguments."""
        kwargs: dict[str, object] = (
            dict(arguments) if isinstance(arguments, dict) else {}
        )
        return await self.run(kwargs)

    @staticmethod
    def messages(value: object) -> list[JsonValue]:
        """Shape a prompt's return value into protocol messages."""
        if isinstance(value, str):
            return [PromptMessage("user", TextContent(value)).to_wire()]
        if isinstance(value, PromptMessage):
            return [value.to_wire()]
        return [m.to_wire() for m in value]  # type: ignore[attr-defined]


@overload
def prompt(fn: Callable[P, R], /) -> Prompt[P, R]: ...
@overload
def prompt(
    *,
    name: str | None = None,
    title: str | None = None,
    caps: Sequence[Capability] = (),
    timeout: Seconds | None = None,
) -> Callable[[Callable[P, R]], Prompt[P, R]]: ...
def prompt(fn: Any = None, /, **options: Any) -> Any:
    """Declare a function as a prompt; its parameters are ``str`` or ``str | None``.

    Args:
        name: The wire name; defaults to the function's name.
        title: A display title.
    """
    if fn is not None:
        return Prompt(fn, **options)

    def decorate(f: Callable[P, R]) -> Prompt[P, R]:
        return Prompt(f, **options)

    return decorate

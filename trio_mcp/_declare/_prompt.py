"""``@prompt``: a function returns prompt messages for the client to show.

Prompt arguments travel as strings, so every parameter is ``str`` or ``str | None``.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ParamSpec, TypeVar, overload

import attrs

from .._authority import Capability
from .._errors import InvalidDeclaration, InvalidReply
from .._units import Seconds
from ._base import Declaration
from ._collect import check_options, declared
from ._content import PromptMessage, TextContent
from ._docstring import describe, undescribed
from ._needs_input import NeedsInput
from ._replies import MISSING, strip_needs_input
from ._signature import input_parameters, stale_args
from ._values import Completer, Icon, PromptArgument, PromptGet, PromptReply, PromptSpec

__all__ = ["FunctionPrompt", "prompt", "prompt_messages"]

P = ParamSpec("P")
R = TypeVar("R")

_ALLOWED_RETURNS = (str, PromptMessage, list[PromptMessage], Sequence[PromptMessage])
_STRINGS = (str, str | None, typing.Optional[str])  # noqa: UP045


class FunctionPrompt(Declaration[P, R]):
    """A decorated function or method served as a ``Prompt``."""

    kind = "prompt"

    def __init__(
        self,
        fn: Callable[P, R],
        *,
        name: str | None = None,
        title: str | None = None,
        icons: Sequence[Icon] = (),
        caps: Sequence[Capability] = (),
        timeout: Seconds | None = None,
        complete: Mapping[str, Completer] | None = None,
    ) -> None:
        self.icons = tuple(icons)
        self.complete = dict(complete or {})
        self.described = describe(fn)
        super().__init__(fn, name=name, title=title, caps=caps, timeout=timeout)

    def _prepare(self, hints: dict[str, object]) -> None:
        where = self.where
        inputs, self.bad_params = input_parameters(
            self.fn,
            where=where,
            skip_self=self.is_method,
            hints=hints,
            refusal=_not_a_string,
            signature=self.signature,
        )
        self.arguments: list[PromptArgument] = []
        #: Arguments a ``prompts/get`` may leave out that have no default: None.
        self.absent_as_none: dict[str, None] = {}
        for one in inputs:
            if one.default is None and one.annotation is str:
                self.bad_params.append(
                    f"{where}: parameter '{one.name}' is 'str' with the default None; "
                    f"annotate it '{one.name}: str | None = None' (the prompt may then "
                    "get None) or give it a string default"
                )
            if one.default is None:
                self.absent_as_none[one.name] = None
            self.arguments.append(
                PromptArgument(
                    one.name,
                    self.described.params.get(one.name),
                    one.default is attrs.NOTHING,
                )
            )
        returns = hints.get("return", MISSING)
        inner = strip_needs_input(returns)
        self.returns = inner
        if inner not in _ALLOWED_RETURNS:
            raise InvalidDeclaration(
                f"{where}: a prompt returns str, PromptMessage or list[PromptMessage]; "
                "annotate the return type with one of them"
            )

    def problems(self) -> list[str]:
        """Return what must be fixed before a Server may serve this prompt."""
        found = super().problems()
        where = self.where
        if not self.described.summary:
            found.append(undescribed(where, "prompt"))
        found.extend(stale_args(self.described.params, self._written(), where=where))
        found.extend(self.bad_params)
        for arg in self.arguments:
            if arg.description is None:
                found.append(
                    f"{where}: parameter '{arg.name}' has no description; "
                    "document it under 'Args:' in the docstring"
                )
        return found

    def _written(self) -> list[str]:
        """Every parameter the function has, refused ones too (their ``Args:``
        entries are not stale)."""
        params = list(self.signature.parameters)
        return params[1:] if self.is_method else params

    def spec(self) -> PromptSpec:
        """Return this prompt's catalog entry."""
        self.ensure_prepared()
        return PromptSpec(
            name=self.name,
            description=self.described.summary,
            arguments=tuple(self.arguments),
            title=self.title,
            icons=self.icons,
            caps=self.caps,
            timeout=self.timeout,
            complete=self.complete,
        )

    async def dispatch(self, get: PromptGet) -> PromptReply:
        """Run the prompt with its checked string arguments and shape the messages.

        Raises:
            InvalidReply: if the return value is not a str, a PromptMessage or a
                list of them.
        """
        value = await self.run({**self.absent_as_none, **get.arguments})
        if isinstance(value, NeedsInput):
            return PromptReply.needs_input(value)
        return PromptReply(
            messages=prompt_messages(value, self.returns, where=self.declaration),
            description=self.described.summary,
        )


def _not_a_string(annotation: object) -> str | None:
    if annotation in _STRINGS:
        return None
    return " must be 'str' or 'str | None' (prompt arguments are strings)"


def prompt_messages(
    value: object, declared: object, *, where: str
) -> tuple[PromptMessage, ...]:
    """Return a prompt's return value as messages, if it is what ``declared`` says.

    Raises:
        InvalidReply: for a value that is not the declared str, PromptMessage or
            list of PromptMessage.
    """
    if declared is str and isinstance(value, str):
        return (PromptMessage("user", TextContent(value)),)
    if declared is PromptMessage and isinstance(value, PromptMessage):
        return (value,)
    if (
        declared not in (str, PromptMessage)
        and isinstance(value, list | tuple)
        and all(isinstance(m, PromptMessage) for m in value)
    ):
        return tuple(value)
    raise InvalidReply(
        where,
        f"returned a {type(value).__name__}; a prompt returns what it declares, "
        f"here '-> {_name(declared)}'",
    )


def _name(declared: object) -> str:
    return getattr(declared, "__name__", None) or repr(declared)


@overload
def prompt(fn: Callable[P, R], /) -> FunctionPrompt[P, R]: ...
@overload
def prompt(
    *,
    name: str | None = None,
    title: str | None = None,
    icons: Sequence[Icon] = (),
    caps: Sequence[Capability] = (),
    timeout: Seconds | None = None,
    complete: Mapping[str, Completer] | None = None,
) -> Callable[[Callable[P, R]], FunctionPrompt[P, R]]: ...
def prompt(fn: Any = None, /, **options: Any) -> Any:
    """Declare a function as a prompt; its parameters are ``str`` or ``str | None``.

    Args:
        name: The wire name; defaults to the function's name.
        title: A display title.
        complete: ``{"argument": fn}``: ``fn(value, context)`` offers values for
            ``completion/complete`` (sync or async; ``context`` holds the other
            arguments already filled in). A key must name a parameter.
    """

    def decorate(f: Callable[P, R]) -> FunctionPrompt[P, R]:
        def make() -> FunctionPrompt[P, R]:
            check_options("prompt", f, options, _PROMPT_OPTIONS)
            return FunctionPrompt(f, **options)

        return declared("prompt", f, make, options.get("name"))

    return decorate if fn is None else decorate(fn)


#: The keywords ``@prompt(...)`` takes.
_PROMPT_OPTIONS = frozenset(inspect.signature(FunctionPrompt).parameters) - {"fn"}

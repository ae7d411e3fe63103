"""``@tool``: a typed function or method becomes an MCP tool.

The decorator derives the input schema, the argument decoder and the output shape
from the signature at once, so an unsupported type fails here, naming the
parameter, and never at call time.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, ParamSpec, TypeVar, overload

import attrs

from .._authority import Capability
from .._decode import decode
from .._errors import InvalidDeclaration, ToolError
from .._json import JsonObject, JsonValue
from .._protocol._headers import param_headers
from .._units import Seconds
from ._base import Declaration
from ._docstring import describe
from ._replies import MISSING, ReplyShape, tool_reply_shape
from ._signature import Plan, plan_arguments

__all__ = ["Tool", "ToolHints", "ToolSpec", "tool"]

P = ParamSpec("P")
R = TypeVar("R")

_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")


@attrs.frozen(kw_only=True)
class ToolHints:
    """Hints for the client about a tool's behaviour. They grant nothing."""

    read_only: bool = False
    destructive: bool = True
    idempotent: bool = False
    open_world: bool = True
    title: str | None = None

    def to_wire(self) -> JsonObject:
        """Return the protocol's ``ToolAnnotations``."""
        out: JsonObject = {
            "readOnlyHint": self.read_only,
            "destructiveHint": self.destructive,
            "idempotentHint": self.idempotent,
            "openWorldHint": self.open_world,
        }
        if self.title is not None:
            out["title"] = self.title
        return out


@attrs.frozen(kw_only=True)
class ToolSpec:
    """A tool's catalog entry, as ``tools/list`` shows it."""

    name: str
    title: str | None
    description: str | None
    input_schema: JsonObject
    output_schema: JsonObject | None
    hints: ToolHints | None
    declaration: str

    def to_wire(self) -> JsonObject:
        """Return the protocol's ``Tool``."""
        out: JsonObject = {"name": self.name}
        if self.title is not None:
            out["title"] = self.title
        if self.description is not None:
            out["description"] = self.description
        out["inputSchema"] = self.input_schema
        if self.output_schema is not None:
            out["outputSchema"] = self.output_schema
        if self.hints is not None:
            out["annotations"] = self.hints.to_wire()
        return out


class Tool(Declaration[P, R]):
    """A tool declaration: callable like the function, served by a ``Server``."""

    kind = "tool"
    plan: Plan
    reply: ReplyShape

    def __init__(
        self,
        fn: Callable[P, R],
        *,
        name: str | None = None,
        title: str | None = None,
        hints: ToolHints | None = None,
        caps: Sequence[Capability] = (),
        errors: Sequence[type[BaseException]] | type[BaseException] = (ToolError,),
        timeout: Seconds | None = None,
    ) -> None:
        errors = (errors,) if isinstance(errors, type) else tuple(errors)
        for err in errors:
            if not (isinstance(err, type) and issubclass(err, Exception)):
                raise InvalidDeclaration(
                    f"{fn.__module__}:{fn.__qualname__}: errors= takes exception "
                    f"classes, got {err!r}"
                )
        self.errors: tuple[type[BaseException], ...] = errors
        self.hints = hints
        self.described = describe(fn)
        super().__init__(fn, name=name, title=title, caps=caps, timeout=timeout)

    def _prepare(self, hints: dict[str, object]) -> None:
        self.plan = plan_arguments(
            self.fn,
            where=self.declaration,
            descriptions=self.described.params,
            skip_self=self.is_method,
            hints=hints,
        )
        self.param_headers, self._header_problems = param_headers(
            self.plan.input_schema
        )
        self.reply = tool_reply_shape(
            hints.get("return", MISSING), where=self.declaration
        )

    def problems(self) -> list[str]:
        """Return what must be fixed before a Server may serve this tool."""
        found = super().problems()
        where = f"tool '{self.name}' ({self.declaration})"
        if not _NAME.match(self.name):
            found.append(
                f"{where}: the name must be 1-128 letters, digits, '_', '.' or '-'"
            )
        found.extend(f"{where}: {problem}" for problem in self._header_problems)
        if not self.described.summary:
            found.append(
                f"{where}: has no description; write a docstring whose first "
                "paragraph says what the tool does"
            )
        for param in self.plan.names:
            if param not in self.described.params:
                found.append(
                    f"{where}: parameter '{param}' has no description; "
                    f"document it under 'Args:' in the docstring"
                )
        return found

    def spec(self) -> ToolSpec:
        """Return this tool's catalog entry."""
        self.ensure_prepared()
        return ToolSpec(
            name=self.name,
            title=self.title,
            description=self.described.summary,
            input_schema=self.plan.input_schema,
            output_schema=self.reply.output_schema,
            hints=self.hints,
            declaration=self.declaration,
        )

    def decode_arguments(self, arguments: JsonValue) -> dict[str, object]:
        """Decode a call's ``arguments`` into keyword arguments.

        Raises:
            DecodeError: listing every bad input.
        """
        value: object = decode(
            self.plan.arguments_class, {} if arguments is None else arguments
        )
        return {name: getattr(value, name) for name in self.plan.names}

    async def dispatch(self, arguments: JsonValue) -> object:
        """Decode ``arguments``, run the handler and return what it returned.

        Exceptions propagate: the dispatcher turns them into results or errors.
        """
        return await self.run(self.decode_arguments(arguments))


@overload
def tool(fn: Callable[P, R], /) -> Tool[P, R]: ...
@overload
def tool(
    *,
    name: str | None = None,
    title: str | None = None,
    hints: ToolHints | None = None,
    caps: Sequence[Capability] = (),
    errors: Sequence[type[BaseException]] | type[BaseException] = (ToolError,),
    timeout: Seconds | None = None,
) -> Callable[[Callable[P, R]], Tool[P, R]]: ...
def tool(fn: Any = None, /, **options: Any) -> Any:
    """Declare a function, async function or method as an MCP tool.

    Usable bare (``@tool``) or with options (``@tool(name=..., caps=[...])``).

    Args:
        name: The wire name; defaults to the function's name.
        title: A display title.
        hints: ``ToolHints`` for the client; they grant nothing.
        caps: Capabilities each call requires, and the ceiling of ``ctx.require``.
        errors: Exceptions whose message the model may read (``isError`` results).
        timeout: Seconds or a timedelta; the call's deadline.

    Raises:
        InvalidDeclaration: at once, for an unannotated or unsupported parameter or
            return type, naming the declaration and the parameter.
    """
    if fn is not None:
        return Tool(fn, **options)

    def decorate(f: Callable[P, R]) -> Tool[P, R]:
        return Tool(f, **options)

    return decorate

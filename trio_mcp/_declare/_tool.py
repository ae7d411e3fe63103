"""``@tool``: a typed function or method becomes an MCP tool.

The decorator derives the input schema, the argument decoder and the output shape
from the signature at once, so an unsupported type fails here, naming the
parameter, and never at call time.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Sequence
from typing import Any, ParamSpec, TypeVar, overload

from .._authority import Capability
from .._decode import decode
from .._errors import InvalidDeclaration, ToolError
from .._json import JsonObject, JsonValue
from .._protocol._headers import param_headers
from .._schema import declared_description
from .._units import Seconds
from ._base import Declaration, where_of
from ._collect import check_options, declared
from ._docstring import describe, undescribed
from ._needs_input import NeedsInput
from ._replies import MISSING, ReplyShape, tool_reply_shape
from ._signature import Plan, plan_arguments, stale_args
from ._values import (
    Icon,
    TaskStart,
    TaskSupport,
    ToolCall,
    ToolHints,
    ToolReply,
    ToolSpec,
)
from ._view import View, Visibility, check_visibility

__all__ = ["FunctionTool", "error_reply", "message_chain", "qualified", "tool"]

P = ParamSpec("P")
R = TypeVar("R")

_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")


class FunctionTool(Declaration[P, R]):
    """A decorated function or method: callable like it, served as a ``Tool``."""

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
        icons: Sequence[Icon] = (),
        caps: Sequence[Capability] = (),
        errors: Sequence[type[BaseException]] | type[BaseException] = (ToolError,),
        timeout: Seconds | None = None,
        task: TaskSupport | None = None,
        task_start: TaskStart = "call",
        durable: bool = False,
        max_attempts: int = 3,
        view: View | None = None,
        visibility: Sequence[Visibility] | None = None,
    ) -> None:
        where = where_of("tool", fn, name)
        _check_durable(where, task, durable, max_attempts)
        self.durable = durable
        self.max_attempts = max_attempts
        if view is not None and not isinstance(view, View):
            raise InvalidDeclaration(
                f"{where}: view= takes a View('ui://...', html), got {view!r}"
            )
        self.view = view
        self.visibility = check_visibility(visibility, where=where)
        if task not in (None, "optional", "required"):
            raise InvalidDeclaration(
                f"{where}: task= takes 'optional' or 'required', got {task!r}"
            )
        if task_start not in ("call", "handler"):
            raise InvalidDeclaration(
                f"{where}: task_start= takes 'call' or 'handler', got {task_start!r}"
            )
        self.task: TaskSupport | None = task
        self.task_start: TaskStart = task_start
        errors = (errors,) if isinstance(errors, type) else tuple(errors)
        for err in errors:
            if not (isinstance(err, type) and issubclass(err, Exception)):
                raise InvalidDeclaration(
                    f"{where}: errors= takes exception classes, got {err!r}"
                )
        self.errors: tuple[type[BaseException], ...] = errors
        self.hints = hints
        self.icons = tuple(icons)
        self.described = describe(fn)
        super().__init__(fn, name=name, title=title, caps=caps, timeout=timeout)

    def _prepare(self, hints: dict[str, object]) -> None:
        self.plan = plan_arguments(
            self.fn,
            where=self.where,
            descriptions=self.described.params,
            skip_self=self.is_method,
            hints=hints,
            signature=self.signature,
        )
        self.param_headers, self._header_problems = param_headers(
            self.plan.input_schema
        )
        self.reply = tool_reply_shape(hints.get("return", MISSING), where=self.where)

    def problems(self) -> list[str]:
        """Return what must be fixed before a Server may serve this tool."""
        found = super().problems()
        where = self.where
        if not _NAME.match(self.name):
            found.append(
                f"{where}: the name must be 1-128 letters, digits, '_', '.' or '-'"
            )
        found.extend(f"{where}: {problem}" for problem in self._header_problems)
        if not self.described.summary:
            found.append(undescribed(where, "tool"))
        found.extend(stale_args(self.described.params, self.plan.names, where=where))
        for one in self.plan.inputs:
            if one.name in self.described.params:
                continue
            if declared_description(one.annotation) is None:
                found.append(
                    f"{where}: parameter '{one.name}' has no description; "
                    "document it under 'Args:' in the docstring (or give "
                    "Annotated[..., Field(description=...)])"
                )
        return found

    def spec(self) -> ToolSpec:
        """Return this tool's catalog entry."""
        self.ensure_prepared()
        return ToolSpec(
            name=self.name,
            description=self.described.summary,
            input_schema=self.plan.input_schema,
            output_schema=self.reply.output_schema,
            title=self.title,
            annotations=self.hints,
            icons=self.icons,
            caps=self.caps,
            timeout=self.timeout,
            task=self.task,
            task_start=self.task_start,
            durable=self.durable,
            max_attempts=self.max_attempts,
            view=self.view,
            visibility=self.visibility,
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

    async def dispatch(self, call: ToolCall) -> ToolReply:
        """Decode the arguments, run the handler and shape its return value.

        An exception listed in ``errors=`` becomes an ``isError`` reply; others
        propagate for the server to turn into -32603.

        Raises:
            DecodeError: listing every bad argument.
            InvalidReply: if the return value does not fit the return type.
        """
        kwargs = self.decode_arguments(call.arguments)
        try:
            value = await self.run(kwargs)
        except self.errors as exc:
            return error_reply(exc)
        if isinstance(value, NeedsInput):
            return ToolReply.needs_input(value)
        return self.reply.reply(value, where=self.declaration)


def message_chain(exc: BaseException) -> list[str]:
    """Return ``exc``'s message and those of its ``__cause__`` chain."""
    out: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        out.append(str(current) or type(current).__name__)
        current = current.__cause__
    return out


def qualified(exc_type: type[BaseException]) -> str:
    """Return ``module.QualName`` of an exception class."""
    return f"{exc_type.__module__}.{exc_type.__qualname__}"


def _check_durable(
    where: str, task: object, durable: object, max_attempts: object
) -> None:
    """``durable=`` needs ``task=``; ``max_attempts`` is a count of at least one."""
    if not isinstance(durable, bool):
        raise InvalidDeclaration(
            f"{where}: durable= takes True or False, got {durable!r}"
        )
    if durable and task is None:
        raise InvalidDeclaration(
            f"{where}: durable=True needs task='optional' or task='required': only a "
            "task outlives its request, so only a task can run again elsewhere"
        )
    if (
        isinstance(max_attempts, bool)
        or not isinstance(max_attempts, int)
        or max_attempts < 1
    ):
        raise InvalidDeclaration(
            f"{where}: max_attempts= takes an integer of at least 1, got "
            f"{max_attempts!r}"
        )


def error_reply(exc: BaseException) -> ToolReply:
    """The ``isError`` reply for an exception the model may read: its message chain."""
    chain = message_chain(exc)
    text = "\n".join([chain[0], *(f"caused by: {m}" for m in chain[1:])])
    messages: list[JsonValue] = list(chain)
    detail: JsonObject = {
        "kind": "error",
        "type": type(exc).__name__,
        "messages": messages,
    }
    return ToolReply.error(text, detail, error_type=qualified(type(exc)))


@overload
def tool(fn: Callable[P, R], /) -> FunctionTool[P, R]: ...
@overload
def tool(
    *,
    name: str | None = None,
    title: str | None = None,
    hints: ToolHints | None = None,
    icons: Sequence[Icon] = (),
    caps: Sequence[Capability] = (),
    errors: Sequence[type[BaseException]] | type[BaseException] = (ToolError,),
    timeout: Seconds | None = None,
    task: TaskSupport | None = None,
    task_start: TaskStart = "call",
    durable: bool = False,
    max_attempts: int = 3,
    view: View | None = None,
    visibility: Sequence[Visibility] | None = None,
) -> Callable[[Callable[P, R]], FunctionTool[P, R]]: ...
def tool(fn: Any = None, /, **options: Any) -> Any:
    """Declare a function, async function or method as an MCP tool.

    Usable bare (``@tool``) or with options (``@tool(name=..., caps=[...])``).

    Args:
        name: The wire name; defaults to the function's name.
        title: A display title.
        hints: ``ToolHints`` for the client; they grant nothing.
        icons: ``Icon`` values a client may show.
        caps: Capabilities each call requires, and the ceiling of ``ctx.require``.
        errors: Exceptions whose message the model may read (``isError`` results).
        timeout: Seconds or a timedelta; the call's deadline (a task's too).
        task: ``"optional"`` or ``"required"`` lets a call run as a task (the
            tasks extension): a client that declares the extension gets a
            ``CreateTaskResult`` and polls ``tasks/get``; a client that does not
            gets the plain result (``"optional"``) or -32021 (``"required"``).
        task_start: ``"call"`` (the default) creates the task as the call starts;
            ``"handler"`` runs the handler first, so it may ask for input by multi
            round-trip or answer at once, and creates the task when it awaits
            ``ToolContext.current().task_started()``.
        durable: With a shared store (``RedisStore``), a task whose process dies
            (killed, hung, stopped) runs again from the start on another replica
            that declares the tool: at least once, so the handler must be safe to
            run again (docs/guides/tasks.md). Needs ``task=``.
        max_attempts: Most attempts of a durable task, the first one included;
            then it is ``failed``.
        view: A ``View`` (MCP Apps): hosts that render views show it with the
            tool's result; the tool's list entry names it in ``_meta.ui``, and the
            server serves it as a resource. Other clients get the tool as it is.
        visibility: Who may call the tool (``_meta.ui.visibility``): ``("model",
            "app")`` (the default: the agent and the view), ``("app",)`` (only the
            view, hidden from the model) or ``("model",)``.

    Raises:
        InvalidDeclaration: at once, for an unannotated or unsupported parameter or
            return type, naming the declaration and the parameter.
    """

    def decorate(f: Callable[P, R]) -> FunctionTool[P, R]:
        def make() -> FunctionTool[P, R]:
            check_options("tool", f, options, _TOOL_OPTIONS)
            return FunctionTool(f, **options)

        return declared("tool", f, make, options.get("name"))

    return decorate if fn is None else decorate(fn)


#: The keywords ``@tool(...)`` takes.
_TOOL_OPTIONS = frozenset(inspect.signature(FunctionTool).parameters) - {"fn"}

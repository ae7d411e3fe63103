"""The call methods: each finds its target, builds one ``Call`` and runs its chain.

``tools/call``, ``prompts/get`` and ``resources/read`` read only what names the
target (a request that names nothing served is a -32602 protocol error and leaves no
receipt); everything else (grants, arguments, the handler, the reply) happens in
the chain of the edge the request came through, which returns an ``Ending``. A
tool that may run as a task runs the edge's task chain, whose first step is the
tasks extension's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import trio

from .._authority import resolve_grants, wrap_write_only
from .._context import CancelToken, ToolContext
from .._declare import ToolSpec
from .._json import JsonObject, JsonValue
from .._protocol import _wire as wire
from .._protocol._headers import check_param_headers
from ._call import Call, Ending, Middleware, Target
from ._request import Checked, Failure

if TYPE_CHECKING:
    from ._catalog import Catalog

__all__ = ["Calls", "Method", "TaskHost", "new_call", "required_str"]

E = TypeVar("E")

#: A method: a result to finish and encode, or an ending of a call.
Method = Callable[[Checked], Awaitable["JsonObject | Ending"]]


class TaskHost(Protocol):
    """The tasks extension, as the dispatcher sees it (``_tasks.TaskRunner``)."""

    @property
    def outer(self) -> Middleware:
        """The step that runs a call as a task: before every other step."""

    @property
    def inner(self) -> Middleware:
        """The step that starts a ``task_start="call"`` task: before the handler."""

    def methods(self) -> dict[str, Callable[[Checked], Awaitable[JsonObject]]]:
        """``tasks/get``, ``tasks/update``, ``tasks/cancel``."""

    async def listen_filter(self, requested: JsonValue, request: Checked) -> list[str]:
        """The task ids of a listen filter this caller may follow."""

    def view(self, task_id: str) -> JsonObject | None:
        """A task as ``tasks/get`` shows it now, or None once it is gone."""

    def open(self) -> AbstractAsyncContextManager[None]:
        """Run tasks in a nursery for the duration of the block."""

    def attach(self, dispatcher: Any) -> None:
        """Know the dispatcher: a durable task claimed here runs again through it."""


class Calls:
    """The call methods of a dispatcher (the base of ``Dispatcher``).

    ``catalog`` is read on each call, so replacing it (a new catalog) takes effect
    at once.
    """

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    async def _tools_call(self, request: Checked) -> Ending:
        name, entry = _named(request, self.catalog.tools, "tool")
        arguments = request.params.get("arguments")
        if arguments is not None and not isinstance(arguments, dict):
            raise Failure.invalid("params.arguments must be an object")
        headers = request.caller.headers
        if headers is not None and entry.param_headers:
            fault = check_param_headers(
                headers, entry.param_headers, arguments, request.id
            )
            if fault is not None:
                raise Failure.of(fault)
        call = new_call(request, entry, name, arguments or {})
        edge = request.edge
        if entry.spec.task is not None:
            return await edge.task_chain(call)
        return await edge.chain(call)

    async def _prompts_get(self, request: Checked) -> Ending:
        name, entry = _named(request, self.catalog.prompts, "prompt")
        raw = request.params.get("arguments")
        # Checked by the prompt's target, after the grants: a refused caller
        # learns nothing about the arguments, and a bad call leaves a receipt.
        arguments = raw if isinstance(raw, dict) else _Unchecked(raw)
        call = new_call(request, entry, name, arguments)
        return await request.edge.chain(call)

    async def _resources_read(self, request: Checked) -> Ending:
        uri = required_str(request, "uri")
        found = self.catalog.find_resource(uri)
        if found is None:
            raise Failure.not_found(uri)
        entry, variables = found
        call = new_call(request, entry, uri, variables)
        return await request.edge.chain(call)


class _Unchecked(dict[str, JsonValue]):
    """Prompt arguments that are not an object: empty, remembering what was sent."""

    def __init__(self, raw: JsonValue) -> None:
        super().__init__()
        self.raw = raw


def _named(request: Checked, table: Mapping[str, E], kind: str) -> tuple[str, E]:
    """The name a ``tools/call`` or ``prompts/get`` asks for, and its catalog entry."""
    name = required_str(request, "name")
    entry = table.get(name)
    if entry is None:
        raise Failure.invalid(
            f"unknown {kind} '{name}'; call {kind}s/list for the catalog"
        )
    return name, entry


def required_str(request: Checked, key: str) -> str:
    """``params[key]``, which must be a string.

    Raises:
        Failure: -32602 naming the missing parameter.
    """
    value = request.params.get(key)
    if not isinstance(value, str):
        raise Failure.invalid(f"{request.method} needs params.{key} (a string)")
    return value


def new_call(
    request: Checked,
    target: Target,
    name: str,
    arguments: Mapping[str, Any],
) -> Call:
    """The call value of one request: its context, grants and deadline resolved.

    A ``Secret`` argument (a ``writeOnly`` value of the input schema) is wrapped in
    ``Secret`` here, so no step sees its plaintext.
    """
    timeout = target.timeout
    deadline = None if timeout is None else trio.current_time() + timeout
    scope = None if deadline is None else trio.CancelScope(deadline=deadline)
    caller = request.caller
    # A stream's close fires ctx.cancel at once (docs/limits.md); an HTTP app's
    # close() lets requests go on.
    closed = caller.closing if caller.stream else None
    meta = request.meta
    client_info = meta.get(wire.META_CLIENT_INFO)
    token = meta.get(wire.META_PROGRESS_TOKEN)
    context = ToolContext(
        request_id=request.id,
        principal=caller.principal,
        client=client_info if isinstance(client_info, dict) else None,
        client_capabilities=meta[wire.META_CLIENT_CAPABILITIES],  # type: ignore[arg-type]
        deadline=deadline,
        cancel=CancelToken(scope, closed=closed, request=request.scope),
        declared=target.required,
        granted=resolve_grants(caller.allow, caller.principal),
        progress_token=None if token is None else _progress_token(token),
        log_level=meta.get(wire.META_LOG_LEVEL),  # type: ignore[arg-type]
        emit=request.emit,
        name=name,
    )
    spec = target.spec
    if isinstance(spec, ToolSpec) and getattr(target, "write_only", False):
        arguments = wrap_write_only(arguments, spec.input_schema)  # type: ignore[arg-type,assignment]
    return Call(
        method=request.method,  # type: ignore[arg-type]
        name=name,
        arguments=arguments,
        principal=caller.principal,
        request_id=request.id,
        context=context,
        spec=spec,
        target=target,
        request=request,
        deadline=scope,
    )


def _progress_token(token: object) -> str | int | None:
    if isinstance(token, str) or (
        isinstance(token, int) and not isinstance(token, bool)
    ):
        return token
    return None

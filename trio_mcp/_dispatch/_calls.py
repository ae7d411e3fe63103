"""The call methods: each finds its target, builds one ``Call`` and runs it.

``tools/call``, ``prompts/get`` and ``resources/read`` read only what names the
target (a request that names nothing served is a -32602 protocol error and leaves no
receipt); everything else (grants, arguments, the handler, the reply) happens in
``Runner.run``, which returns an ``Ending``. A tool that may run as a task goes to
the task host, which runs the same call through the same runner.
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Protocol, TypeVar

from .._json import JsonObject, JsonValue
from .._protocol._headers import check_param_headers
from ._call import Call, Ending
from ._request import Failure, Incoming
from ._runner import Runner, new_call

if TYPE_CHECKING:
    from collections.abc import Callable

    from ._catalog import Catalog

__all__ = ["Calls", "TaskHost"]

E = TypeVar("E")

#: A method: a result to finish and encode, or an ending of a call.
Handler = "Callable[[Incoming], Awaitable[JsonObject | Ending]]"


class TaskHost(Protocol):
    """The tasks extension, as the dispatcher sees it (``_tasks.TaskRunner``)."""

    async def call_tool(self, runner: Runner, call: Call) -> Ending:
        """Run a call of a tool that may become a task; the request's ending."""

    def methods(self) -> dict[str, Callable[[Incoming], Awaitable[JsonObject]]]:
        """``tasks/get``, ``tasks/update``, ``tasks/cancel``."""

    async def listen_filter(self, requested: JsonValue, inc: Incoming) -> list[str]:
        """The task ids of a listen filter this caller may follow."""

    def view(self, task_id: str) -> JsonObject | None:
        """A task as ``tasks/get`` shows it now, or None once it is gone."""

    def open(self) -> AbstractAsyncContextManager[None]:
        """Run tasks in a nursery for the duration of the block."""


class Calls:
    """The dispatcher's call methods (a base of ``Dispatcher``, which sets these).

    They are read on each call, so replacing one (a new catalog) takes effect at once.
    """

    catalog: Catalog
    runner: Runner
    tasks: TaskHost

    async def _tools_call(self, inc: Incoming) -> Ending:
        name, entry = _named(inc, self.catalog.tools, "tool")
        arguments = inc.params.get("arguments")
        if arguments is not None and not isinstance(arguments, dict):
            raise Failure.invalid("params.arguments must be an object")
        headers = inc.caller.headers
        if headers is not None and entry.param_headers:
            fault = check_param_headers(headers, entry.param_headers, arguments, inc.id)
            if fault is not None:
                raise Failure.of(fault)
        call = new_call(inc, entry, name, arguments or {})
        if entry.spec.task is not None:
            return await self.tasks.call_tool(self.runner, call)
        return await self.runner.run(call)

    async def _prompts_get(self, inc: Incoming) -> Ending:
        name, entry = _named(inc, self.catalog.prompts, "prompt")
        raw = inc.params.get("arguments")
        # Checked by the prompt's target, after the grants: a refused caller
        # learns nothing about the arguments, and a bad call leaves a receipt.
        arguments = raw if isinstance(raw, dict) else _Unchecked(raw)
        return await self.runner.run(new_call(inc, entry, name, arguments))

    async def _resources_read(self, inc: Incoming) -> Ending:
        uri = required_str(inc, "uri", "resources/read")
        found = self.catalog.find_resource(uri)
        if found is None:
            raise Failure.invalid(f"resource not found: {uri}", {"uri": uri})
        entry, variables = found
        return await self.runner.run(new_call(inc, entry, uri, variables))


class _Unchecked(dict[str, JsonValue]):
    """Prompt arguments that are not an object: empty, remembering what was sent."""

    def __init__(self, raw: JsonValue) -> None:
        super().__init__()
        self.raw = raw


def _named(inc: Incoming, table: Mapping[str, E], kind: str) -> tuple[str, E]:
    """The name a ``tools/call`` or ``prompts/get`` asks for, and its catalog entry."""
    name = required_str(inc, "name", inc.request.method)
    entry = table.get(name)
    if entry is None:
        raise Failure.invalid(
            f"unknown {kind} '{name}'; call {kind}s/list for the catalog"
        )
    return name, entry


def required_str(inc: Incoming, key: str, method: str) -> str:
    """``params[key]``, which must be a string.

    Raises:
        Failure: -32602 naming the missing parameter.
    """
    value = inc.params.get(key)
    if not isinstance(value, str):
        raise Failure.invalid(f"{method} needs params.{key} (a string)")
    return value

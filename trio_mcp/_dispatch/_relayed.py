"""Entries another server answers: a gateway's tools, prompts and resources.

A relayed entry is a catalog entry like any other (the chain runs for it: grants,
rate limits, middleware, masking, a receipt), whose handler is a ``Relay``: the
upstream's own name for it and how a call reaches it. Its reply is the upstream's
result as received, relayed as it is (``content``, ``structuredContent``,
``isError``, ``messages``, ``contents``), and checked like our own: a tool result
whose structured content breaks the output schema we list is an ``InvalidReply``
(-32603 with a logged reference), never relayed.

The dispatcher knows no client: ``Relay.send`` is whatever the upstream layer gave
(``_upstream``), called with the call and the upstream's name for the target.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import attrs

from .._authority import reveal_all
from .._errors import InvalidReply
from .._json import JsonObject, JsonValue
from ._call import AnyReply, Call, Ending
from ._catalog import PromptEntry, ResourceEntry, ToolEntry
from ._request import Failure
from ._targets import refuse_escape, text_arguments

__all__ = [
    "Relay",
    "RelayedPrompt",
    "RelayedReply",
    "RelayedResource",
    "RelayedTool",
    "Send",
    "Unanswered",
]

#: Sends a call upstream: the method, the params the upstream is sent (its own
#: name, the arguments) and the inbound call (its deadline, progress, principal);
#: returns the upstream's result as received.
Send = Callable[[str, JsonObject, Call], Awaitable[JsonObject]]


class Unanswered(Exception):
    """What ``Send`` raises when the upstream gave no result: unreachable, a
    JSON-RPC error (its ``code``), a reply that is not one. The message says why
    and never holds a credential."""

    def __init__(self, reason: str, code: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.code = code


@attrs.frozen(kw_only=True, eq=False)
class Relay:
    """The far side of a relayed entry."""

    upstream: str
    """The upstream, named without credentials (``Upstream.label``)."""
    name: str
    """The upstream's own name for the entry (a tool's or prompt's, or the URI
    template of a resource)."""
    send: Send = attrs.field(repr=False)

    async def __call__(
        self, method: str, params: JsonObject, call: Call
    ) -> RelayedReply:
        """Send the call upstream: its result, or the failure naming the upstream."""
        try:
            return RelayedReply(await self.send(method, params, call))
        except Unanswered as exc:
            raise Failure.upstream(self.upstream, exc.reason, exc.code) from None


@attrs.frozen(eq=False)
class RelayedReply:
    """An upstream's result, as received."""

    result: JsonObject
    needs: None = None
    """Never anything: an upstream's input requests are not relayed."""


def _result(reply: AnyReply) -> JsonObject:
    assert isinstance(reply, RelayedReply)
    return reply.result


def _objects(result: JsonObject, key: str, declaration: str) -> list[JsonValue]:
    """``result[key]``, which must be a list of objects (content blocks, messages,
    contents): anything else is not relayed.

    Raises:
        InvalidReply: naming the upstream's entry and what is wrong.
    """
    value = result.get(key)
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise InvalidReply(
            declaration, f"the upstream's result has no list of objects in '{key}'"
        )
    return value


class _FromUpstream:
    """What the three relayed entries share: the upstream, and their listing."""

    __slots__ = ()
    adopter: Relay
    listed: JsonObject

    @property
    def upstream(self) -> str | None:
        """The upstream that answers this entry (named on its receipts)."""
        return self.adopter.upstream

    def to_wire(self) -> JsonObject:
        """The upstream's listing, under the name we serve it by."""
        return self.listed


@attrs.frozen(kw_only=True, eq=False)
class RelayedTool(_FromUpstream, ToolEntry):
    """A tool another server answers."""

    adopter: Relay  # type: ignore[assignment]
    listed: JsonObject
    """Its ``Tool`` as we list it."""

    async def answer(self, call: Call) -> AnyReply:
        """Send the call upstream (secrets revealed: the upstream is their reader)."""
        arguments = reveal_all(call.arguments) if self.write_only else call.arguments
        params: JsonObject = {"name": self.adopter.name, "arguments": arguments}  # type: ignore[dict-item]
        return await self.adopter("tools/call", params, call)

    def shaped(self, reply: AnyReply) -> Ending:
        """The upstream's ``CallToolResult``, checked against our listing."""
        result = self._relayed(_result(reply))
        if result["isError"]:
            return Ending(outcome="error", result=result)
        if self.spec.output_schema is not None:
            if "structuredContent" not in result:
                raise InvalidReply(
                    self.declaration,
                    "the upstream's result has no structured content, though "
                    "the tool lists an output schema",
                )
            assert self.check_output is not None
            self.check_output(result["structuredContent"])
        return Ending(outcome="ok", result=result)

    def _relayed(self, result: JsonObject) -> JsonObject:
        """The members of a ``CallToolResult`` we relay (the upstream's ``_meta``
        names the upstream's server, not us)."""
        out: JsonObject = {"content": _objects(result, "content", self.declaration)}
        if "structuredContent" in result:
            out["structuredContent"] = result["structuredContent"]
        out["isError"] = result.get("isError") is True
        return out


@attrs.frozen(kw_only=True, eq=False)
class RelayedPrompt(_FromUpstream, PromptEntry):
    """A prompt another server answers."""

    adopter: Relay  # type: ignore[assignment]
    listed: JsonObject

    async def answer(self, call: Call) -> AnyReply:
        """Send the ``prompts/get`` upstream, its arguments as given."""
        raw: JsonValue = getattr(call.arguments, "raw", dict(call.arguments))
        params: JsonObject = {"name": self.adopter.name}
        if raw:
            params["arguments"] = raw
        return await self.adopter("prompts/get", params, call)

    def shaped(self, reply: AnyReply) -> Ending:
        """The upstream's ``GetPromptResult``: its description and messages."""
        result = _result(reply)
        out: JsonObject = {}
        if isinstance(result.get("description"), str):
            out["description"] = result["description"]
        out["messages"] = _objects(result, "messages", self.declaration)
        return Ending(outcome="ok", result=out)


@attrs.frozen(kw_only=True, eq=False)
class RelayedResource(_FromUpstream, ResourceEntry):
    """A resource or template another server answers."""

    adopter: Relay  # type: ignore[assignment]
    listed: JsonObject

    async def answer(self, call: Call) -> AnyReply:
        """Refuse a climbing variable, then send the read upstream."""
        refuse_escape(self.template, text_arguments(call), call.name)
        params: JsonObject = {"uri": call.name}
        return await self.adopter("resources/read", params, call)

    def shaped(self, reply: AnyReply) -> Ending:
        """The upstream's ``ReadResourceResult``: its contents, never cached."""
        result = _result(reply)
        return Ending(
            outcome="ok",
            result={
                "contents": _objects(result, "contents", self.declaration),
                "ttlMs": 0,
                "cacheScope": "private",
            },
        )

"""A ``Server`` composed in process: its catalog read once, its calls through its
dispatcher as real JSON.

``Upstream(server)`` is composed when the gateway ``Server(...)`` is built: the
composed server's listings become relayed entries then (so a collision is an
``McpError.DuplicateName`` there), and each entry requires what the composed
declaration requires besides the upstream's ``caps=``: the inbound caller must
hold both, and the composed server is asked with exactly the grants the inbound
call holds. A call is one request to the composed server's dispatcher, in the
inbound call's own task: Trio's cancellation and the deadline reach its handler as
they reach ours. Its progress and log messages are relayed to the inbound caller.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

from .._authority import Capability
from .._dispatch import Caller
from .._dispatch._call import Call
from .._dispatch._catalog import Entry
from .._json import JsonObject, loads
from .._protocol import _wire as wire
from .._protocol._jsonrpc import Request
from ._entries import Listing, entries
from ._notices import relay_notice, result_of
from ._value import Upstream

if TYPE_CHECKING:
    from .._serving import Serving as Server  # its base: _server imports us

__all__ = ["composed"]

#: The client info a composed server sees.
_CLIENT_INFO: JsonObject = {"name": "trio-mcp-gateway", "version": "1"}


def composed(upstream: Upstream, server: Server) -> list[Entry]:
    """The relayed entries of a composed ``server``, as it lists them now."""
    catalog = server._dispatcher.catalog
    own: dict[tuple[str, str], tuple[Capability, ...]] = {}
    for entry in [
        *catalog.tools.values(),
        *catalog.prompts.values(),
        *catalog.resources,
    ]:
        own[(entry.kind, entry.name)] = entry.spec.caps

    def caps(kind: str, item: JsonObject) -> tuple[Capability, ...]:
        key = (
            item.get("name")
            if kind in ("tool", "prompt")
            else item.get("uri", item.get("uriTemplate"))
        )
        return own.get((kind, key), ()) if isinstance(key, str) else ()

    listing = Listing(
        tools=catalog.wire_tools,
        prompts=catalog.wire_prompts,
        resources=catalog.wire_resources,
        templates=catalog.wire_templates,
    )
    return entries(upstream, listing, InProcess(server), caps)


class InProcess:
    """Sends relayed calls to a composed server's dispatcher (``Send``)."""

    def __init__(self, server: Server) -> None:
        self._dispatcher = server._dispatcher
        self._ids = itertools.count(1)

    async def __call__(self, method: str, params: JsonObject, call: Call) -> JsonObject:
        ctx = call.context
        meta: JsonObject = {
            wire.META_PROTOCOL_VERSION: wire.PROTOCOL_VERSION,
            wire.META_CLIENT_CAPABILITIES: {},
            wire.META_CLIENT_INFO: _CLIENT_INFO,
        }
        if ctx.progress_token is not None:
            meta[wire.META_PROGRESS_TOKEN] = 1
        if ctx.log_level is not None:
            meta[wire.META_LOG_LEVEL] = ctx.log_level
        request = Request(next(self._ids), method, {**params, "_meta": meta})

        async def emit(message: JsonObject) -> None:
            await relay_notice(ctx, message)

        reply = await self._dispatcher.handle(request, Caller(allow=ctx.granted), emit)
        return result_of(loads(reply.body))

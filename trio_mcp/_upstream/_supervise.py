"""Keeping a remote upstream served: connect, list, follow, and retry.

One supervisor per remote upstream runs for as long as the server serves
(``Gateway.running``). It never holds up the server: the server's own catalog is
served from the start, and an upstream's entries join it when its listing arrives.

1. Connect (``trio_mcp.client.Client``, within ``connect_timeout``) and list what
   the upstream serves (the kinds its capabilities name), each list within its
   ``timeout``; publish the entries (the server's catalog changes, and its
   clients are told).
2. Follow it: a 2026-07-28 upstream through a listen stream
   (``subscriptions/listen``), a handshake-era one through the list-changed
   notifications of its session. Each change lists it again (changes that come
   while listing are coalesced into one more listing). A handshake-era session is
   pinged every ``_PING`` seconds, so a dead one is noticed.
3. When anything fails (unreachable, refused, a listing that is not one, the
   connection lost), its entries are withdrawn, the reason is logged with its
   label (never a credential) and it is tried again after 0.5 s, doubling up to
   30 s; a listing that succeeds starts the delay over.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import trio

from .._dispatch._catalog import Entry
from .._errors import McpError, Timeout
from .._errors import Remote as RemoteError
from .._json import JsonObject
from ._entries import Listing, entries
from ._remote import Remote
from ._value import Upstream

if TYPE_CHECKING:
    from ..client import Client

__all__ = ["FIRST_DELAY", "MAX_DELAY", "supervise"]

log = logging.getLogger("trio_mcp")

#: Seconds before the first retry of an upstream that failed, and the most.
FIRST_DELAY = 0.5
MAX_DELAY = 30.0
#: Seconds between pings of a handshake-era session (its liveness).
_PING = 10.0
_ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
_FILTER: JsonObject = {
    "toolsListChanged": True,
    "promptsListChanged": True,
    "resourcesListChanged": True,
}

Publish = Callable[[list[Entry]], None]


async def supervise(upstream: Upstream, publish: Publish) -> None:
    """Serve ``upstream``'s catalog through ``publish`` until cancelled."""
    remote = Remote(upstream)
    delay = FIRST_DELAY

    def listed(found: list[Entry]) -> None:
        nonlocal delay
        delay = FIRST_DELAY
        publish(found)

    while True:
        reason = await _connection(upstream, remote, listed)
        remote.client = None
        publish([])
        log.warning(
            "upstream %s is not served: %s; trying again in %g s",
            upstream.label,
            reason,
            delay,
        )
        await trio.sleep(delay)
        delay = min(delay * 2, MAX_DELAY)


async def _connection(upstream: Upstream, remote: Remote, publish: Publish) -> str:
    """Serve one connection to ``upstream``; return why it ended.

    The stream of changes is open (its acknowledgement received) before the first
    listing, so no change falls between the two.
    """
    from ..client import Client  # the client layer, loaded by a remote upstream only

    following, changed = trio.Event(), trio.Event()

    async def on_change(method: str) -> None:
        if method == _ACKNOWLEDGED:
            following.set()
        elif method.endswith("list_changed"):
            changed.set()

    async def serve(client: Client) -> None:
        nonlocal changed
        with trio.move_on_after(upstream.connect_timeout):
            await following.wait()
        publish(await _listing(upstream, remote, client))
        remote.client = client
        log.info(
            "upstream %s is served (revision %s)",
            upstream.label,
            client.server.revision,
        )
        while True:
            await changed.wait()
            changed = trio.Event()
            publish(await _listing(upstream, remote, client))

    try:
        async with Client(
            upstream.target,
            headers=dict(upstream.headers),
            auth=remote.token,
            timeout=upstream.connect_timeout,
            era=upstream.era,
            on_change=on_change,
        ) as client:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(serve, client)
                reason = await _follow(client, following)
                nursery.cancel_scope.cancel()
            return reason
    except Exception as exc:  # Trio's cancellation is not one: it goes on
        return _reason(exc)


def _reason(exc: BaseException) -> str:
    """Why a connection failed, for the log: the client's own words (which name
    no credential), else the kind of failure alone."""
    while isinstance(exc, BaseExceptionGroup):
        exc = exc.exceptions[0]
    if isinstance(exc, McpError):
        return str(exc)
    if isinstance(exc, OSError):  # a command that cannot start
        return f"{type(exc).__name__}: {exc.strerror or 'cannot start'}"
    return f"it failed unexpectedly ({type(exc).__name__})"


async def _follow(client: Client, following: trio.Event) -> str:
    """Keep a listen stream open (2026-07-28; an upstream without one is pinged
    instead), or ping a handshake-era session (whose changes come unasked); return
    why the connection ended. ``following`` is set once changes are followed."""
    if client.server.modern:
        try:
            await client.request(
                "subscriptions/listen", {"notifications": _FILTER}, timeout=math.inf
            )
            return "the upstream ended its listen stream"
        except RemoteError:
            pass  # no listen stream: its catalog is not followed, its life is
    following.set()
    while True:
        await trio.sleep(_PING)
        await client.request("ping", timeout=_PING)


async def _listing(upstream: Upstream, remote: Remote, client: Client) -> list[Entry]:
    """List every kind the upstream serves (within its ``timeout`` each); its
    entries."""
    capabilities = client.server.capabilities
    lists = {
        "tools": (client.list_tools, "tools"),
        "prompts": (client.list_prompts, "prompts"),
        "resources": (client.list_resources, "resources"),
        "templates": (client.list_resource_templates, "resources"),
    }
    found: dict[str, list[JsonObject]] = {}
    for kind, (listed, capability) in lists.items():
        found[kind] = []
        if capability in capabilities:
            with trio.move_on_after(upstream.timeout):
                found[kind] = await listed()
                continue
            raise Timeout(f"listing its {kind} took more than {upstream.timeout:g} s")
    return entries(upstream, Listing(**found), remote)

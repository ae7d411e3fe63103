"""``subscriptions/listen``: the honoured filter, the acknowledgement, the stream.

A listen request opens a subscription on the broadcast, sends
``notifications/subscriptions/acknowledged`` with the subset of the requested filter
this server honours, then one tagged notification per change until the request is
cancelled (stdio ``notifications/cancelled``, a closed HTTP stream) or the transport
shuts down gracefully (``closing`` is set), when the listen's result ends it
(MCP revision 2026-07-28, subscriptions/listen). Nothing here knows a transport: ``emit`` writes.

What is honoured (our choice, within the spec's MUSTs): a list-change flag only when
that kind's ``listChanged`` is advertised (``Server(dynamic=True)``); a resource URI
only when ``resources.subscribe`` is advertised and the URI is served by an
updatable declaration (its static URI, or a URI a template matches). Updates match
subscriptions by exact URI: ``notify_updated("ticket://42")`` reaches listeners of
``ticket://42``, not of other URIs.
"""

from __future__ import annotations

from collections.abc import Callable

import trio

from .._context import Emit
from .._json import JsonObject, JsonValue
from .._protocol import _wire as wire
from ._broadcast import Broadcast, Change, ListKind, Subscription
from ._catalog import Catalog

__all__ = ["LISTEN_METHOD", "BadFilter", "honour", "is_updatable", "stream"]

LISTEN_METHOD = "subscriptions/listen"
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"

_FLAGS: dict[str, ListKind] = {
    "toolsListChanged": "tools",
    "promptsListChanged": "prompts",
    "resourcesListChanged": "resources",
}


class BadFilter(Exception):
    """``params.notifications`` is not a SubscriptionFilter; the message says why."""


def is_updatable(catalog: Catalog, uri: str) -> bool:
    """Whether ``uri`` is served by a declaration marked ``updatable=True``."""
    found = catalog.find_resource(uri)
    return found is not None and found[0].spec.updatable


def honour(
    requested: JsonValue, capabilities: JsonObject, catalog: Catalog
) -> tuple[JsonObject, list[Change]]:
    """Return the honoured filter (for the acknowledgement) and the changes wanted.

    Raises:
        BadFilter: if ``requested`` is not a SubscriptionFilter object.
    """
    if not isinstance(requested, dict):
        raise BadFilter(
            "subscriptions/listen needs params.notifications, a SubscriptionFilter "
            'object such as {"toolsListChanged": true}'
        )
    honoured: JsonObject = {}
    wants: list[Change] = []
    for flag, kind in _FLAGS.items():
        value = requested.get(flag)
        if value is not None and not isinstance(value, bool):
            raise BadFilter(f"params.notifications.{flag} must be a boolean")
        advertised = capabilities.get(kind)
        if (
            value
            and isinstance(advertised, dict)
            and advertised.get("listChanged") is True
        ):
            honoured[flag] = True
            wants.append(Change.list_changed(kind))
    uris = requested.get("resourceSubscriptions")
    if uris is not None and (
        not isinstance(uris, list) or not all(isinstance(u, str) for u in uris)
    ):
        raise BadFilter(
            "params.notifications.resourceSubscriptions must be a list of URIs"
        )
    resources = capabilities.get("resources")
    if uris and isinstance(resources, dict) and resources.get("subscribe") is True:
        kept = [
            u
            for u in dict.fromkeys(uris)
            if isinstance(u, str) and is_updatable(catalog, u)
        ]
        if kept:
            honoured["resourceSubscriptions"] = list(kept)
            wants.extend(Change.updated(u) for u in kept)
    return honoured, wants


async def stream(
    subscription_id: str | int,
    honoured: JsonObject,
    wants: list[Change],
    broadcast: Broadcast,
    emit: Emit,
    closing: trio.Event | None,
    task_view: Callable[[str], JsonObject | None] | None = None,
) -> JsonObject:
    """Acknowledge, then emit each wanted change; return the result once ``closing``.

    Subscribes before acknowledging, so no change after the acknowledgement is lost.
    A task's change is sent as ``task_view`` renders the task when it is sent (the
    task as ``tasks/get`` would show it then); a task that is gone is skipped.
    """
    with broadcast.subscribe(wants) as subscription:
        await emit(
            wire.notification_message(
                ACKNOWLEDGED,
                {"_meta": _tag(subscription_id), "notifications": honoured},
            )
        )
        async with trio.open_nursery() as nursery:
            if closing is not None:
                nursery.start_soon(_end_when, closing, subscription)
            async for change in subscription:
                params: JsonObject = {"_meta": _tag(subscription_id)}
                if change.uri is not None:
                    params["uri"] = change.uri
                if change.task_id is not None:
                    view = None if task_view is None else task_view(change.task_id)
                    if view is None:
                        continue
                    params.update(view)
                await emit(wire.notification_message(change.method, params))
            nursery.cancel_scope.cancel()
    return {"_meta": _tag(subscription_id)}


def _tag(subscription_id: str | int) -> JsonObject:
    return {wire.META_SUBSCRIPTION_ID: subscription_id}


async def _end_when(closing: trio.Event, subscription: Subscription) -> None:
    await closing.wait()
    subscription.end()

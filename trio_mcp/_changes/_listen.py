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

from collections.abc import Callable, Iterable
from typing import Protocol

import attrs
import trio

from .._context import Emit
from .._json import JsonObject, JsonValue
from .._protocol import _wire as wire
from ._broadcast import Broadcast, Change, ListKind, Subscription

__all__ = [
    "LISTEN_METHOD",
    "BadFilter",
    "Listener",
    "Wanted",
    "honour",
    "stream",
]

LISTEN_METHOD = "subscriptions/listen"
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"

_FLAGS: dict[str, ListKind] = {
    "toolsListChanged": "tools",
    "promptsListChanged": "prompts",
    "resourcesListChanged": "resources",
}


class BadFilter(Exception):
    """``params.notifications`` is not a SubscriptionFilter; the message says why."""


class Closing(Protocol):
    """Who listens, as the stream sees it: the transport's graceful shutdown."""

    @property
    def closing(self) -> trio.Event | None: ...


class Listener(Protocol):
    """The listen request as the stream sees it: its id and its caller."""

    @property
    def id(self) -> str | int: ...

    @property
    def caller(self) -> Closing: ...

    @property
    def emit(self) -> Emit:
        """Sends a notification on the listen's stream."""


@attrs.define(eq=False)
class Wanted:
    """What one listen asked for and is honoured: the acknowledgement's filter and
    the changes it receives."""

    honoured: JsonObject = attrs.Factory(dict)
    changes: list[Change] = attrs.Factory(list)

    def add(self, key: str, value: JsonValue, changes: Iterable[Change]) -> None:
        """Honour ``value`` under ``key`` of the filter, receiving ``changes``."""
        self.honoured[key] = value
        self.changes.extend(changes)


def honour(
    requested: JsonValue,
    capabilities: JsonObject,
    is_updatable: Callable[[str], bool],
) -> Wanted:
    """Return what of ``requested`` (``params.notifications``) this server honours.

    ``is_updatable(uri)`` says whether an ``updatable=True`` declaration serves a URI.

    Raises:
        BadFilter: if ``requested`` is not a SubscriptionFilter object.
    """
    if not isinstance(requested, dict):
        raise BadFilter(
            "subscriptions/listen needs params.notifications, a SubscriptionFilter "
            'object such as {"toolsListChanged": true}'
        )
    wanted = Wanted()
    for flag, kind in _FLAGS.items():
        if _flag(requested, flag) and _advertised(capabilities, kind, "listChanged"):
            wanted.add(flag, True, [Change.list_changed(kind)])
    uris = _uris(requested)
    if uris and _advertised(capabilities, "resources", "subscribe"):
        kept = [u for u in dict.fromkeys(uris) if is_updatable(u)]
        if kept:
            wanted.add("resourceSubscriptions", list(kept), map(Change.updated, kept))
    return wanted


def _flag(requested: JsonObject, flag: str) -> bool:
    value = requested.get(flag)
    if value is not None and not isinstance(value, bool):
        raise BadFilter(f"params.notifications.{flag} must be a boolean")
    return bool(value)


def _uris(requested: JsonObject) -> list[str]:
    uris = requested.get("resourceSubscriptions")
    if uris is None:
        return []
    strings = [u for u in uris if isinstance(u, str)] if isinstance(uris, list) else []
    if not isinstance(uris, list) or len(strings) != len(uris):
        raise BadFilter(
            "params.notifications.resourceSubscriptions must be a list of URIs"
        )
    return strings


def _advertised(capabilities: JsonObject, kind: str, flag: str) -> bool:
    advertised = capabilities.get(kind)
    return isinstance(advertised, dict) and advertised.get(flag) is True


async def stream(
    request: Listener,
    wanted: Wanted,
    broadcast: Broadcast,
    task_view: Callable[[str], JsonObject | None] | None = None,
) -> JsonObject:
    """Acknowledge, then emit each wanted change; return the result once the
    transport is closing (``request.caller.closing``).

    Subscribes before acknowledging, so no change after the acknowledgement is lost.
    A task's change is sent as ``task_view`` renders the task when it is sent (the
    task as ``tasks/get`` would show it then); a task that is gone is skipped.
    """
    tag = _tag(request.id)
    closing = request.caller.closing
    with broadcast.subscribe(wanted.changes) as subscription:
        acknowledged: JsonObject = {"_meta": tag, "notifications": wanted.honoured}
        await request.emit(wire.notification_message(ACKNOWLEDGED, acknowledged))
        async with trio.open_nursery() as nursery:
            if closing is not None:
                nursery.start_soon(_end_when, closing, subscription)
            async for change in subscription:
                params = _change_params(change, tag, task_view)
                if params is not None:
                    await request.emit(wire.notification_message(change.method, params))
            nursery.cancel_scope.cancel()
    return {"_meta": tag}


def _change_params(
    change: Change,
    tag: JsonObject,
    task_view: Callable[[str], JsonObject | None] | None,
) -> JsonObject | None:
    """The params of the notification for ``change``; None for a task now gone."""
    params: JsonObject = {"_meta": tag}
    if change.uri is not None:
        params["uri"] = change.uri
    if change.task_id is not None:
        view = None if task_view is None else task_view(change.task_id)
        if view is None:
            return None
        params.update(view)
    return params


def _tag(subscription_id: str | int) -> JsonObject:
    return {wire.META_SUBSCRIPTION_ID: subscription_id}


async def _end_when(closing: trio.Event, subscription: Subscription) -> None:
    await closing.wait()
    subscription.end()

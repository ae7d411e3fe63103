"""``ServerOptions``: the keywords of ``Server(...)`` beyond its catalog and policies.

``Server.__init__`` names what a server is made of and how it is run (its catalog,
``instructions``, ``receipts``, ``state_key``, ``store``, ``skills``, ``middleware``,
``legacy``); the rest arrive here, typed by this ``TypedDict``, as values:

- ``info``: a ``ServerInfo`` (title, website, icons). ``title=``, ``website_url=``
  and ``icons=`` are spellings of the same value and keep working;
- ``broadcast``: where changes are published. It comes with the store by default: a
  ``RedisStore`` brings its ``RedisBroadcast``, anything else a ``Broadcast`` of this
  process;
- ``dynamic``: whether ``replace()`` may change the catalog while serving.

An unknown keyword is an ``McpError.InvalidArgument`` naming the ones there are.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TypedDict

import attrs

from ._changes import Broadcast
from ._checks import invalid
from ._declare import Icon, ServerInfo
from ._errors import InvalidArgument
from ._store import RedisStore, Store

__all__ = ["ServerOptions", "Settled", "settle"]


class ServerOptions(TypedDict, total=False):
    """The keyword options of ``Server(...)`` besides those it names.

    Attributes:
        info: What ``serverInfo`` says besides the name and version
            (``ServerInfo(title=..., website_url=..., icons=...)``).
        title: Spelling of ``info``'s ``title``: a display name for people.
        website_url: Spelling of ``info``'s ``website_url``: the server's home page.
        icons: Spelling of ``info``'s ``icons``: ``Icon`` values a client may show.
        broadcast: Where resource updates and catalog changes are published: by
            default the store's (``RedisStore(url)`` brings a ``RedisBroadcast`` on
            the same Redis, reaching every worker and replica); otherwise a
            ``Broadcast()`` reaching this process's listen streams.
        dynamic: Let ``replace()`` change the catalog while serving; the server then
            advertises ``listChanged: true`` for tools, resources and prompts (each
            served even while empty) and announces changes on listen streams. A
            fixed catalog (the default) advertises ``listChanged: false``.
    """

    info: ServerInfo | None
    title: str | None
    website_url: str | None
    icons: Iterable[Icon]
    broadcast: Broadcast | None
    dynamic: bool


#: ``ServerInfo``'s fields, accepted as keywords of ``Server(...)``.
_INFO_FIELDS = ("title", "website_url", "icons")


@attrs.frozen
class Settled:
    """``ServerOptions`` checked: the values the server is built with."""

    info: ServerInfo
    broadcast: Broadcast | None
    dynamic: bool


def settle(options: Mapping[str, object], store: Store | None) -> Settled:
    """The values ``options`` give (with their defaults).

    Raises:
        McpError.InvalidArgument: for an unknown keyword, ``info=`` together with
            one of its spellings, or a value that is not what the keyword takes.
    """
    unknown = sorted(set(options) - set(ServerOptions.__annotations__))
    if unknown:
        known = ", ".join(sorted(ServerOptions.__annotations__))
        raise InvalidArgument(
            f"Server(...) got unknown keyword {', '.join(map(repr, unknown))}; "
            f"besides those it names it takes {known} (see ServerOptions)"
        )
    return Settled(
        info=_info(options),
        broadcast=_broadcast(options.get("broadcast"), store),
        dynamic=_flag(options.get("dynamic", False)),
    )


def _info(options: Mapping[str, object]) -> ServerInfo:
    info = options.get("info")
    spelled = {k: options[k] for k in _INFO_FIELDS if k in options}
    if info is None:
        return ServerInfo(**spelled)  # type: ignore[arg-type]
    if not isinstance(info, ServerInfo):
        raise invalid("Server(info=...)", "a trio_mcp.ServerInfo or None", info)
    if spelled:
        raise InvalidArgument(
            f"Server(...) got info= and {', '.join(f'{k}=' for k in spelled)}: "
            "give the title, website and icons in one place, preferably "
            "info=ServerInfo(...)"
        )
    return info


def _broadcast(broadcast: object, store: Store | None) -> Broadcast | None:
    if broadcast is None:
        return store.broadcast() if isinstance(store, RedisStore) else None
    if not isinstance(broadcast, Broadcast):
        raise invalid(
            "Server(broadcast=...)",
            "a Broadcast (such as RedisBroadcast(url))",
            broadcast,
        )
    return broadcast


def _flag(value: object) -> bool:
    if not isinstance(value, bool):
        raise invalid("Server(dynamic=...)", "True or False", value)
    return value

"""``ServerOptions``: the keywords of ``Server(...)`` beyond its catalog and policies.

``Server.__init__`` names every keyword it takes; this module checks the ones that
group into values and says what each means once:

- ``info``: a ``ServerInfo`` (title, website, icons). ``title=``, ``website_url=``
  and ``icons=`` are deprecated spellings of the same value (a
  ``DeprecationWarning``; they keep working);
- ``broadcast``: where changes are published. It comes with the store by default: a
  ``RedisStore`` brings its ``RedisBroadcast``, anything else a ``Broadcast`` of this
  process;
- ``dynamic``: whether ``replace()`` may change the catalog while serving.

``ServerOptions`` types these keywords as a dict, for code that collects them before
building a server (``Server(name, version, **options)`` type-checks against it).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from typing import TypedDict

import attrs

from ._changes import Broadcast
from ._checks import invalid
from ._declare import Icon, ServerInfo
from ._errors import InvalidArgument
from ._store import RedisStore, Store

__all__ = ["ServerOptions", "Settled", "settle"]


class ServerOptions(TypedDict, total=False):
    """The keyword options of ``Server(...)`` besides its catalog and policies.

    Attributes:
        info: What ``serverInfo`` says besides the name and version
            (``ServerInfo(title=..., website_url=..., icons=...)``).
        title: Deprecated spelling of ``info``'s ``title``: a display name for people.
        website_url: Deprecated spelling of ``info``'s ``website_url``: the
            server's home page.
        icons: Deprecated spelling of ``info``'s ``icons``: ``Icon`` values a
            client may show.
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
    icons: Iterable[Icon] | None
    broadcast: Broadcast | None
    dynamic: bool


@attrs.frozen
class Settled:
    """``ServerOptions`` checked: the values the server is built with."""

    info: ServerInfo
    broadcast: Broadcast | None
    dynamic: bool


def settle(
    *,
    info: object,
    spelled: dict[str, object],
    broadcast: object,
    dynamic: object,
    store: Store | None,
) -> Settled:
    """The values the options give (with their defaults); ``spelled`` holds the
    deprecated ``title=``, ``website_url=`` and ``icons=`` that were given.

    Raises:
        McpError.InvalidArgument: for ``info=`` together with one of its
            spellings, or a value that is not what the keyword takes.
    """
    return Settled(
        info=_info(info, spelled),
        broadcast=_broadcast(broadcast, store),
        dynamic=_flag(dynamic),
    )


def _info(info: object, spelled: dict[str, object]) -> ServerInfo:
    if info is not None and not isinstance(info, ServerInfo):
        raise invalid("Server(info=...)", "a trio_mcp.ServerInfo or None", info)
    if info is not None and spelled:
        raise InvalidArgument(
            f"Server(...) got info= and {', '.join(f'{k}=' for k in spelled)}: "
            "give the title, website and icons in one place, preferably "
            "info=ServerInfo(...)"
        )
    if info is not None:
        return info
    value = ServerInfo(**spelled)  # type: ignore[arg-type]
    if spelled:  # checked first: a bad value is refused before it is warned of
        names = ", ".join(f"{k}=" for k in spelled)
        warnings.warn(
            f"Server({names}...) is deprecated: give "
            "info=ServerInfo(title=..., website_url=..., icons=...)",
            DeprecationWarning,
            stacklevel=4,
        )
    return value


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

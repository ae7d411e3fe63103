"""A server's upstreams: what each serves now, and the tasks that keep it current.

``Gateway`` holds one slot of relayed entries per upstream, in ``upstreams=``
order, which is also the order of precedence when names collide (the catalog keeps
the earlier source, ``_dispatch._catalog``). A composed ``Server`` fills its slot
when the gateway is built; a remote upstream's slot is empty until its supervisor
(``_supervise``) has listed it, and again while it is unreachable. Each change of a
slot calls ``on_change``: the server builds its catalog again and tells its clients.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, NoReturn

import trio

from .._changes import Change
from .._dispatch._catalog import Entry
from .._errors import DuplicateName
from ._inprocess import composed
from ._value import Upstream

if TYPE_CHECKING:
    from .._serving import Serving

__all__ = ["Gateway"]


class Gateway:
    """The upstreams of one server (``Server(upstreams=...)``).

    Args:
        upstreams: The upstreams, in order of precedence.
        taken: The wire names the server's own declarations use, per kind
            (``tool``, ``prompt``, ``resource``): a composed server may not use them.

    Raises:
        McpError.DuplicateName: if a composed ``Server``'s name or URI is one the
            server or an earlier upstream serves.
    """

    def __init__(
        self, upstreams: Sequence[Upstream], taken: dict[str, set[str]]
    ) -> None:
        self.upstreams = tuple(upstreams)
        self._slots: list[list[Entry]] = [[] for _ in self.upstreams]
        self.on_change: Callable[[], None] = _nothing
        """Called after a slot changed (the server rebuilds its catalog)."""
        self._running = False
        seen = {
            kind: dict.fromkeys(names, "the server's own declarations")
            for kind, names in taken.items()
        }
        for i, upstream in enumerate(self.upstreams):
            if _is_server(upstream.target):
                self._slots[i] = composed(upstream, upstream.target)  # type: ignore[arg-type]
                _no_collision(upstream, self._slots[i], seen)

    @property
    def may_change(self) -> bool:
        """Whether what the upstreams serve may change while serving: a remote
        upstream, or a composed server whose own catalog may."""
        return any(
            upstream.remote or upstream.target._dispatcher.dynamic  # type: ignore[union-attr]
            for upstream in self.upstreams
        )

    def relayed(self) -> list[Entry]:
        """Every upstream's entries, in order of precedence."""
        return [entry for slot in self._slots for entry in slot]

    def set(self, index: int, entries: list[Entry]) -> None:
        """Serve ``entries`` for upstream ``index`` from now on."""
        self._slots[index] = entries
        self.on_change()

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Keep every upstream current for the block: composed servers run their
        own background work, remote ones are connected and followed. Re-entrant:
        an inner block (a second transport) shares the outer one's tasks."""
        if self._running:
            yield
            return
        self._running = True
        try:
            async with trio.open_nursery() as nursery:
                for index, upstream in enumerate(self.upstreams):
                    nursery.start_soon(self._keep, index, upstream)
                try:
                    yield
                finally:
                    nursery.cancel_scope.cancel()
        finally:
            self._running = False

    async def _keep(self, index: int, upstream: Upstream) -> None:
        target = upstream.target
        if _is_server(target):
            await self._follow_composed(index, upstream, target)  # type: ignore[arg-type]
        from ._supervise import supervise

        await supervise(upstream, lambda entries: self.set(index, entries))

    async def _follow_composed(
        self, index: int, upstream: Upstream, server: Serving
    ) -> NoReturn:
        """Run a composed server's own background work (its task nursery, its
        upstreams) and compose it again whenever its catalog changes
        (``replace()``, its own upstreams): a name that collides then is logged
        and not served, as a remote upstream's is."""
        wanted = [
            Change.list_changed(kind) for kind in ("tools", "prompts", "resources")
        ]
        async with server.task_nursery():
            with server.broadcast.subscribe(wanted) as changes:
                async for _ in changes:
                    self.set(index, composed(upstream, server))
        raise AssertionError(
            "a broadcast's subscription never ends"
        )  # pragma: no cover


def _nothing() -> None:
    return None


def _is_server(target: object) -> bool:
    from .._serving import Serving  # a Server's base: _server imports this package

    return isinstance(target, Serving)


def _no_collision(
    upstream: Upstream, entries: list[Entry], seen: dict[str, dict[str, str]]
) -> None:
    """Record a composed server's names; raise for one already served."""
    for entry in entries:
        names = seen.setdefault(entry.kind, {})
        held = names.get(entry.name)
        if held is not None:
            what = "URI" if entry.kind == "resource" else "name"
            raise DuplicateName(
                f"{entry.kind} {what} '{entry.name}' of {upstream.label} is also "
                f"served by {held}; give the upstream a prefix "
                "(Upstream(..., prefix=...)) or allow fewer of its tools (tools=...)"
            )
        names[entry.name] = upstream.label

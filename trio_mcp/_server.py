"""``Server``: the catalog, validated up front, and what serving it shares.

Constructing a Server checks every declaration before any message is read. The
ways to serve it (``serve_stdio``, ``serve_http``, ``mount``, ...) are its base
class, ``Serving`` (``_serving``).
"""

from __future__ import annotations

from collections.abc import (
    Iterable,
    Sequence,
)
from typing import TYPE_CHECKING

import trio

from ._authority import ReceiptSink
from ._changes import Broadcast, Change
from ._checks import as_tuple, invalid
from ._declare import Icon, Prompt, Resource, ServerInfo, Tool, View
from ._dispatch import Catalog, Dispatcher, Middleware
from ._errors import InvalidArgument, McpError
from ._protocol._state import StateSealer
from ._server_options import settle
from ._serving import Serving
from ._skills import Skill, SkillSet
from ._store import Store
from ._tasks import task_runner
from ._upstream import Gateway, Upstream, checked_upstreams

if TYPE_CHECKING:
    from ._declare import PromptSpec, ResourceSpec, ToolSpec

__all__ = ["Server"]


def _check_strings(name: object, version: object, instructions: object) -> None:
    """Refuse a non-string identity before it reaches the wire.

    ``serverInfo`` and ``instructions`` go out on replies as given, so a number
    here would make every message the server sends invalid.
    """
    given = {"name": name, "version": version}
    if instructions is not None:
        given["instructions"] = instructions
    for key, value in given.items():
        if not isinstance(value, str):
            raise InvalidArgument(
                f"Server({key}=...) takes a string, got {type(value).__name__} {value!r}"
            )


def _check_middleware(middleware: Iterable[Middleware]) -> tuple[Middleware, ...]:
    expected = "async callables step(call, next)"
    steps = as_tuple(middleware, "Server(middleware=...)", f"a list of {expected}")
    for step in steps:
        if not callable(step):
            raise invalid("each of Server(middleware=...)", expected, step)
    return steps


class Server(Serving):
    """An MCP server for an explicit catalog of tools, resources and prompts.

    What it serves is here; how it is served (``serve_stdio``, ``serve_http``,
    ``mount``, ``run``, ...) is its base, ``Serving``.

    Args:
        name: The server's name, sent as ``serverInfo``.
        version: The server's version, sent as ``serverInfo``.
        tools: ``@tool`` declarations (functions or bound methods), in catalog order.
        resources: ``@resource`` declarations, and ``View`` values served without a
            tool linking them (the views of ``tools`` are served anyway).
        prompts: ``@prompt`` declarations.
        instructions: Guidance for the client, returned by ``server/discover``.
        receipts: A callable (sync or async) that receives every ``Receipt``.
        state_key: Key for protecting multi round-trip ``requestState`` (HMAC-SHA256):
            bytes or str of at least 32 bytes, or a list of them (the first signs,
            all verify, for rotation). Without one, ``TRIO_MCP_STATE_KEY`` is used
            (keys separated by commas), else a random key per process; with several
            processes or replicas, configure one shared key.
        store: Where state shared beyond one request lives: the rate-limit buckets
            of ``rate_limit=`` and the task records. The default ``MemoryStore()``
            keeps them per process; ``RedisStore(url)`` shares them (and, unless
            ``broadcast`` is given, the broadcast) across workers and replicas.
        skills: ``Skill.from_directory(path)`` values: agent skills served by the
            skills extension (SEP-2640) as ``skill://<name>/<path>`` resources with
            ``skills/list``, ``skills/get`` and ``resources/directory/read``. Each
            folder is read and checked here; the extension is advertised only
            when this is non-empty.
        middleware: Steps every ``tools/call``, ``prompts/get``, ``resources/read``
            and ``completion/complete`` passes through, outermost first: each an
            async callable ``step(call, next) -> Ending`` (docs/guides/middleware.md).
        legacy: Also serve handshake-era clients (revisions 2025-11-25, 2025-06-18,
            2025-03-26: ``initialize``, then a session) over stdio and Streamable
            HTTP (``Mcp-Session-Id`` sessions, in the ``store``), beside 2026-07-28
            ones (docs/guides/hosts.md). Off by default: ``initialize`` is then
            answered with the error naming the supported version. Also settable
            as the ``legacy`` attribute before serving.
        info: What ``serverInfo`` says besides the name and version:
            ``ServerInfo(title=..., website_url=..., icons=...)``.
        broadcast: Where resource updates and catalog changes are published: by
            default the store's (``RedisStore(url)`` brings a ``RedisBroadcast``),
            else a ``Broadcast()`` reaching this process's listen streams.
        dynamic: Let ``replace()`` change the catalog while serving (then
            ``listChanged: true`` is advertised for every kind).
        title: Deprecated spelling of ``info=ServerInfo(title=...)``.
        website_url: Deprecated spelling of ``info=ServerInfo(website_url=...)``.
        icons: Deprecated spelling of ``info=ServerInfo(icons=...)``.
        upstreams: Other servers whose tools, resources, templates and prompts
            are served beside this one's (``Upstream(target, prefix=...)``), each
            call through this server's whole chain (docs/guides/composing.md).
            Earlier sources keep a name that collides; a ``Server`` target is
            composed here, and its collisions raise ``McpError.DuplicateName``.

    Raises:
        McpError.InvalidArgument: if a state key is shorter than 32 bytes, ``name``,
            ``version`` or ``instructions`` is not a string, ``icons`` holds
            something other than ``Icon`` values, or a middleware step is not
            callable (also a ``ValueError`` and a ``TypeError``).
        McpError.InvalidDeclaration: listing every problem found in the declarations.
        McpError.DuplicateName: if two declarations share a wire name.
    """

    def __init__(
        self,
        name: str,
        version: str,
        tools: Sequence[Tool] = (),
        resources: Sequence[Resource | View] = (),
        prompts: Sequence[Prompt] = (),
        *,
        instructions: str | None = None,
        receipts: ReceiptSink | None = None,
        state_key: bytes | str | Sequence[bytes | str] | None = None,
        store: Store | None = None,
        skills: Sequence[Skill] = (),
        middleware: Iterable[Middleware] = (),
        legacy: bool = False,
        info: ServerInfo | None = None,
        broadcast: Broadcast | None = None,
        dynamic: bool = False,
        title: str | None = None,
        website_url: str | None = None,
        icons: Iterable[Icon] | None = None,
        upstreams: Iterable[Upstream] = (),
    ) -> None:
        _check_strings(name, version, instructions)
        steps = _check_middleware(middleware)
        spelled = {"title": title, "website_url": website_url, "icons": icons}
        settled = settle(
            info=info,
            spelled={k: v for k, v in spelled.items() if v is not None},
            broadcast=broadcast,
            dynamic=dynamic,
            store=store,
        )
        gateway = checked_upstreams(upstreams)
        self.dynamic = settled.dynamic
        self.info = settled.info
        """What ``serverInfo`` says besides the name and version (``info=``)."""
        self._skills = SkillSet(skills)
        self._catalog = Catalog(tools, [*resources, *self._skills.resources], prompts)
        self._gateway: Gateway | None = None
        if gateway:
            self._gateway = Gateway(gateway, self._catalog.names())
            self._catalog = self._relaying(self._catalog)
        self._dispatcher = Dispatcher(
            self._catalog,
            name=name,
            version=version,
            instructions=instructions,
            receipts=receipts,
            sealer=StateSealer.from_config(state_key),
            # A remote upstream's catalog follows the upstream's: listChanged.
            dynamic=settled.dynamic
            or (self._gateway is not None and self._gateway.may_change),
            broadcast=settled.broadcast,
            store=store,
            skills=self._skills or None,
            tasks=task_runner,
            middleware=steps,
        )
        self._dispatcher.server_info.update(settled.info.to_wire())
        if self._gateway is not None:
            self._gateway.on_change = self._upstream_changed
            self._dispatcher.services = self._gateway.running
        super().__init__(name, version, self._dispatcher, state_key, legacy)

    def _relaying(self, catalog: Catalog) -> Catalog:
        """``catalog`` with what the upstreams serve now (``upstreams=``)."""
        if self._gateway is None:
            return catalog
        return Catalog(
            catalog.tool_list,
            catalog.resource_list,
            catalog.prompt_list,
            self._gateway.relayed(),
        )

    def _upstream_changed(self) -> None:
        """An upstream's catalog changed: serve ours again, and tell our clients."""
        self._catalog = self._relaying(self._catalog)
        self._dispatcher.replace(self._catalog)

    def catalog(self) -> list[ToolSpec | ResourceSpec | PromptSpec]:
        """Return every entry's spec: tools, resources, then prompts, each in list order."""
        return self._catalog.specs()

    def replace(
        self,
        *,
        tools: Sequence[Tool] | None = None,
        resources: Sequence[Resource | View] | None = None,
        prompts: Sequence[Prompt] | None = None,
    ) -> None:
        """Serve a new catalog from now on and announce what changed.

        The new catalog is validated like the constructor's before anything changes;
        then it replaces the old one at once (requests already running finish with
        the declaration they started with), and listen streams that asked are sent
        ``notifications/tools/list_changed`` (or ``prompts``, ``resources``) for each
        kind whose listing differs. A kind not given keeps its declarations.

        Args:
            tools: The new tools, in catalog order.
            resources: The new resources.
            prompts: The new prompts.

        Raises:
            McpError: if the server was not built with ``dynamic=True``.
            McpError.InvalidDeclaration: listing every problem of the new catalog.
            McpError.DuplicateName: if two declarations share a wire name.

        .. versionadded:: 0.2
        """
        if not self.dynamic:
            raise McpError(
                f"server '{self.name}' has a fixed catalog; build it with "
                "Server(..., dynamic=True) to replace declarations while serving"
            )
        old = self._catalog
        catalog = Catalog(
            old.tool_list if tools is None else tools,
            old.resource_list
            if resources is None
            else [*resources, *self._skills.resources],
            old.prompt_list if prompts is None else prompts,
            self._gateway.relayed() if self._gateway is not None else (),
        )
        self._catalog = catalog
        self._dispatcher.replace(catalog)

    async def notify_updated(self, uri: str) -> None:
        """Tell listen streams subscribed to ``uri`` that the resource changed.

        Sends ``notifications/resources/updated`` to every listen stream whose
        ``resourceSubscriptions`` hold exactly ``uri``. Never waits for a slow
        listener: its changes are coalesced (it receives each changed URI again).

        Args:
            uri: A URI served by a declaration with ``updatable=True`` (its static
                URI, or one its template matches).

        Raises:
            ValueError: if no ``updatable=True`` declaration serves ``uri``.

        .. versionadded:: 0.2
        """
        self._dispatcher.publish(Change.updated(uri))
        await trio.lowlevel.checkpoint()

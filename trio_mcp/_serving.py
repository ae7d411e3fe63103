"""``Serving``: the ways to serve a ``Server`` (its base, holding what serving needs).

Every serve method is an ordinary async function, so it runs under a caller's
nursery and stops when that nursery is cancelled; each opens what serving needs for
as long as it serves (the task nursery, the signal handlers when it owns the
process, the blocked-loop watch). Transports are imported only when used, so
``import trio_mcp`` never loads the web stack. ``Serving`` holds what they need
(the dispatcher ``Server`` builds, the apps made, the legacy hub): ``Server`` adds
the catalog and its changes.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Coroutine,
    Iterable,
)
from contextlib import asynccontextmanager, nullcontext
from typing import TYPE_CHECKING, Any, TypeVar, Unpack, cast

import attrs
import trio

from ._authority import Grants
from ._blocked import watch_blocking
from ._errors import AlreadyRunning, InvalidArgument
from ._http._options import HttpOptions
from ._interrupt import interrupts_unwrapped
from ._json import JsonValue
from ._limits import LimitFields, Limits, StdioFields
from ._protocol._wire import SUPPORTED_VERSIONS
from ._transports._entry import (
    AnnouncingStatus,
    TokenScopes,
    banner,
    owns_the_process,
    require_trio,
    stop_on_signals,
)
from ._transports._stream import (
    MakeFront,
    Oversized,
    one_by_one,
    serve_messages,
    stream_caller,
)

if TYPE_CHECKING:
    from ._changes import Broadcast
    from ._dispatch import Dispatcher
    from ._http._app import McpAsgiApp
    from ._http._oauth import BearerGate
    from ._http._options import PrincipalResolver
    from ._legacy._asgi import LegacyApp
    from ._legacy._hub import Hub
    from ._protocol._state import KeyConfig
    from ._rate_limit import RateLimit

__all__ = ["Serving", "start_line"]

_Serve = TypeVar("_Serve", bound=Callable[..., Coroutine[Any, Any, None]])


def _runs_tasks(serve: _Serve) -> _Serve:
    """Serve with the server's task nursery open (the tasks extension).

    Tool calls that become tasks outlive their request, so they need a nursery
    that lives as long as the serving does: each serve method opens it. The
    wrapper also refuses a loop other than Trio with a message, turns SIGINT and
    SIGTERM into a graceful stop when the serve method is what ``trio.run`` runs
    (``_transports/_entry.py`` says why only then), and watches for handlers that
    block the event loop (``Limits.blocked_warning``).
    """
    grace = _SIGNAL_GRACE.get(serve.__name__, 0.0)

    @functools.wraps(serve)
    async def serving(self: Serving, *args: Any, **kwargs: Any) -> None:
        require_trio(serve.__name__)
        stopping = stop_on_signals(self.shutdown, grace) if owns_the_process() else None
        limits = kwargs.get("limits") or Limits()
        with interrupts_unwrapped(), watch_blocking(limits.blocked_warning):
            async with stopping or nullcontext(), self.task_nursery():
                await serve(self, *args, **kwargs)

    return cast("_Serve", serving)


#: Seconds a signalled serve method gets to stop by itself before it is cancelled:
#: HTTP lets listen streams take their results (``shutdown()``); the others stop now.
_SIGNAL_GRACE = {"serve_http": 5.0}


class Serving:
    """How a ``Server`` is served: stdio, WebSocket, Streamable HTTP (served, or
    mounted in a host's ASGI app), a channel of messages, or ``run()`` from
    synchronous code.

    The base of ``Server``, which builds the dispatcher and hands it here: this
    class holds what serving needs (the dispatcher, the apps made, the
    handshake-era hub) and the task nursery every serve method opens.
    """

    def __init__(
        self,
        name: str,
        version: str,
        dispatcher: Dispatcher,
        state_key: KeyConfig,
        legacy: bool,
    ) -> None:
        self.name = name
        self.version = version
        self.state_key = state_key
        self._dispatcher = dispatcher
        self._apps: weakref.WeakSet[McpAsgiApp | LegacyApp] = weakref.WeakSet()
        """The apps ``mount()`` and ``serve_http()`` made (``shutdown()`` ends them)."""
        self._legacy = False
        self._hub: Hub | None = None
        self.legacy = legacy

    @property
    def legacy(self) -> bool:
        """Whether handshake-era clients are served too (``legacy=``); settable
        before serving."""
        return self._legacy

    @legacy.setter
    def legacy(self, value: bool) -> None:
        self._legacy = bool(value)
        versions: tuple[str, ...] = SUPPORTED_VERSIONS
        if self._legacy:
            from ._legacy import ALL_REVISIONS
            from ._legacy._hub import Hub

            versions = ALL_REVISIONS
            if self._hub is None:
                # Made now, before the store runs: a RedisStore reads the hub's
                # notices only when they are registered as it starts.
                self._hub = Hub(self._dispatcher.store)
        self._dispatcher.versions = versions

    def _wrapped(self, app: McpAsgiApp) -> McpAsgiApp | LegacyApp:
        """``app``, with handshake-era sessions in front when ``legacy`` is on: one
        hub per server, so the apps of one process share what the process holds."""
        if not self._legacy or self._hub is None:
            return app
        from ._legacy._asgi import LegacyApp

        return LegacyApp(app, self._hub, self._output_schema)

    def _front(self) -> MakeFront | None:
        """The legacy session in front of a stream transport, when ``legacy`` is on."""
        if not self.legacy:
            return None
        from ._legacy import stream_front

        return stream_front(self._output_schema)

    def _output_schema(self, name: str) -> JsonValue:
        """The output schema tool ``name`` is served with now (None: none)."""
        entry = self._dispatcher.catalog.tools.get(name)
        return None if entry is None else entry.spec.output_schema

    @property
    def broadcast(self) -> Broadcast:
        """The fan-out of changes to listen streams (``statistics()`` for monitoring).

        Assign a ``RedisBroadcast`` before serving to share changes across
        processes (``trio-mcp serve --broadcast URL`` does).
        """
        return self._dispatcher.broadcast

    @broadcast.setter
    def broadcast(self, broadcast: Broadcast) -> None:
        self._dispatcher.broadcast = broadcast

    @asynccontextmanager
    async def task_nursery(self) -> AsyncIterator[None]:
        """Own the nursery that tool calls running as tasks live in, for the block.

        The serve methods and a mounted app's ASGI lifespan enter it themselves;
        a host that serves ``mount()`` without lifespan (a router that does not
        pass it on) wraps its serving in ``async with server.task_nursery():``.
        Without it, a task tool answers synchronously. Re-entrant; leaving the
        outermost block cancels the tasks still running. Task state lives in this
        process's memory, or in the ``store`` when it is shared (``RedisStore``),
        whose connection the block also holds.

        .. versionadded:: 0.2
        """
        async with self._dispatcher.open():
            yield

    def shutdown(self) -> None:
        """End this server's HTTP serving gracefully.

        Every open listen stream of the apps made by ``mount()`` and ``serve_http()``
        receives its result and ends; ``serve_http`` then stops accepting and returns
        once the requests still running finish (at most about a second). stdio and
        WebSocket shut down when their input ends.

        .. versionadded:: 0.2
        """
        for app in list(self._apps):
            app.close()

    @_runs_tasks
    async def serve_messages(
        self,
        incoming: trio.abc.ReceiveChannel[str | bytes | Oversized],
        send: Callable[[str], Awaitable[None]],
        *,
        allow: Grants = (),
        principal: object | None = None,
        limits: Limits | None = None,
        **fields: Unpack[LimitFields],
    ) -> None:
        """Serve whole JSON-RPC messages from a channel; for custom transports and tests.

        Args:
            incoming: Each item is one message's text (or bytes).
            send: Writes one outgoing message's text (valid UTF-8 once encoded:
                lone surrogates arrive escaped).
            allow: Capabilities granted to the caller, or a function of the principal.
            principal: Who is calling, if the transport knows.
            limits: Every bound at once (``Limits``).
            **fields: ``LimitFields``: deprecated spellings of single ``Limits``
                fields.
        """

        async def send_text(data: bytes) -> None:
            await send(data.decode("utf-8"))

        await serve_messages(
            self._dispatcher,
            incoming,
            one_by_one(send_text),
            caller=stream_caller(allow, principal),
            limits=Limits.of(limits, fields, deprecated_in="serve_messages"),
            front=self._front(),
        )

    @_runs_tasks
    async def serve_stdio(
        self,
        *,
        max_message_bytes: int | None = None,
        max_depth: int | None = None,
        max_concurrent: int | None = None,
        limits: Limits | None = None,
        allow: Grants = (),
        task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
        **fields: Unpack[StdioFields],
    ) -> None:
        """Serve the catalog over stdin and stdout until stdin reaches end of file.

        One compact JSON-RPC message per line, UTF-8, both ways (spec §13). While
        this runs, file descriptor 1 and ``sys.stdout`` point at stderr, so
        ``print()``, C extensions and child processes cannot corrupt the protocol
        stream; fd 0 is ``/dev/null`` so children cannot read it. Both are
        restored when serving ends. On POSIX the pipes are read and written
        without blocking on Trio's I/O loop; on Windows (or with
        ``TRIO_MCP_STDIO_THREADS=1``) by blocking calls in worker threads.

        Args:
            max_message_bytes: A longer line is skipped without being buffered
                and answered with -32600 (``Limits.max_message_bytes``, applied on
                top of ``limits``; likewise the next two).
            max_depth: Deeper JSON is -32700 (``Limits.max_depth``).
            max_concurrent: Calls running at once; up to ``max_waiting`` more
                wait, beyond that -32000 at once (``Limits.max_concurrent``).
            limits: Every bound at once (``Limits``).
            allow: Capabilities granted to the caller, or a function of the
                principal (which is None on stdio).
            task_status: For ``nursery.start``: started once fds are diverted.
            **fields: The other ``LimitFields`` (``max_waiting=``, ...):
                deprecated spellings of single ``Limits`` fields.

        Raises:
            McpError.Transport: if stdin or stdout is missing, reading or writing
                fails for a reason other than end of file (the client closed the
                protocol stream), or stdio is already being served.
        """
        from ._transports._stdio import serve_stdio  # loaded on use

        named = {
            "max_message_bytes": max_message_bytes,
            "max_depth": max_depth,
            "max_concurrent": max_concurrent,
        }
        given: dict[str, Any] = {k: v for k, v in named.items() if v is not None}
        await serve_stdio(
            self._dispatcher,
            limits=Limits.of(
                limits,
                cast("LimitFields", {**fields, **given}),
                deprecated_in="serve_stdio",
                kept=named,
            ),
            allow=allow,
            front=self._front(),
            task_status=AnnouncingStatus(
                task_status, lambda _: start_line(self, "stdio", allow)
            ),
        )

    @_runs_tasks
    async def serve_websocket(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        path: str = "/mcp",
        limits: Limits | None = None,
        allow: Grants = (),
        allowed_origins: Iterable[str] = (),
        allowed_hosts: Iterable[str] | None = None,
        require_auth: bool = False,
        auth: BearerGate | None = None,
        principal: PrincipalResolver | None = None,
        rate_limit: RateLimit | None = None,
        trusted_proxies: Iterable[str] | None = None,
        forwarded_header: str | None = None,
        task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
        **fields: Unpack[LimitFields],
    ) -> None:
        """Serve the catalog over WebSocket, one JSON-RPC message per text frame.

        Needs the ``websocket`` extra (trio-websocket). Clients connect to
        ``ws://host:port/path`` and should offer the subprotocol ``mcp``. Each
        connection gets its own message loop with the same limits as stdio; a
        handler's failure or a client's disconnect ends nothing else; a closed
        connection cancels its requests at once. Runs until
        cancelled; ``await nursery.start(server.serve_websocket, ...)`` returns
        the bound port (useful with ``port=0``).

        Args:
            host: Interface to bind; loopback by default.
            port: TCP port; 0 picks a free one.
            path: The endpoint; other paths are refused with 404.
            limits: Every bound (``Limits``), per connection as on stdio. A message
                over ``max_message_bytes`` is answered with -32600 (one past twice
                the limit closes the connection with 1009, because trio-websocket
                buffers a frame before handing it over).
            allow: Capabilities granted to callers, or a function of the principal.
            allowed_origins: ``Origin`` values accepted besides loopback pages
                (``"https://app.example"``; ``"*"`` accepts any). Other browser
                pages are refused with 403; clients without ``Origin`` pass.
            allowed_hosts: ``Host`` values accepted besides loopback names, as
                for ``serve_http``: a loopback bind checks ``Host`` (a foreign one
                is 421, before the handshake completes: DNS rebinding); a bind
                beyond loopback accepts any unless this is given.
            require_auth: Refuse a handshake without a principal (401). Needed
                (or ``auth``) to bind beyond loopback.
            auth: An OAuth resource server (``trio_mcp.auth.BearerAuth``) that
                checks the bearer token of each handshake (``Authorization``;
                401 when refused) and again for every call; implies
                ``require_auth``. The connection closes (1008) when its token
                expires.
            principal: A function of the handshake's ASGI ``websocket`` scope
                (sync or async) returning the principal, or None; as for
                ``mount``.
            rate_limit: A token bucket per caller (``RateLimit(calls, per)``):
                the principal, else the client's address. A call beyond it gets
                -32000 with ``retryAfterSeconds``.
            trusted_proxies: Reverse proxies whose ``forwarded_header`` names the
                client (as for ``mount``).
            forwarded_header: ``"x-forwarded-for"`` (the default) or
                ``"forwarded"``.
            task_status: For ``nursery.start``: started with the bound port.
            **fields: ``LimitFields``: deprecated spellings of single ``Limits``
                fields.

        Raises:
            McpError.InsecureBinding: if ``host`` is not loopback and neither
                ``require_auth`` nor ``auth`` is given (checked before binding).
            McpError.Transport: if trio-websocket is not installed or the port
                cannot be bound.
        """
        from ._http._forwarded import ClientAddresses
        from ._loopback import check_binding, is_loopback
        from ._transports._websocket import (  # loaded on use
            WebSocketEndpoint,
            serve_websocket,
        )

        check_binding(
            host, require_auth=require_auth or auth is not None, serving="WebSocket"
        )
        endpoint = WebSocketEndpoint(
            self._dispatcher,
            path,
            Limits.of(limits, fields, deprecated_in="serve_websocket"),
            allow,
            allowed_origins,
            allowed_hosts=allowed_hosts,
            check_host=is_loopback(host) or allowed_hosts is not None,
            auth=auth,
            require_auth=require_auth,
            principal=principal,
            rate_limit=rate_limit,
            addresses=ClientAddresses.of(trusted_proxies, forwarded_header, rate_limit),
        )
        where = f"ws://{_bracketed(host)}:{{}}{path}"
        announcing = AnnouncingStatus(
            task_status,
            lambda bound: start_line(
                self, where.format(bound), allow, handshake_era=False
            ),
        )
        await serve_websocket(endpoint, host=host, port=port, task_status=announcing)

    def mount(
        self, path: str = "/mcp", **options: Unpack[HttpOptions]
    ) -> McpAsgiApp | LegacyApp:
        """Return an ASGI 3 app serving the catalog over Streamable HTTP at ``path``.

        The app needs no web framework: run it on Hypercorn's Trio worker or mount it
        in an ASGI router (``Mount("/api", app=server.mount())`` serves ``/api/mcp``);
        ``path`` and ``/healthz`` are relative to where it is mounted. Authentication
        stays with the host application (see ``principal``).

        Args:
            path: The MCP endpoint; it accepts POST only (GET and DELETE get 405).
            **options: The ``HttpOptions`` (``allow``, ``require_auth``,
                ``allowed_hosts``, ``allowed_origins``, ``principal``, ``limits``,
                ``resource_metadata``, ``cors_origins``, ``rate_limit``,
                ``metrics_path``, ``auth``), described once there and shared with
                ``serve_http``.
        """
        app = self._http_app(path, options, check_host=True)
        self._apps.add(app)
        return app

    def _http_app(
        self, path: str, options: HttpOptions, *, check_host: bool
    ) -> McpAsgiApp | LegacyApp:
        from ._http._app import McpAsgiApp  # loaded on use: no web stack

        app = McpAsgiApp(self._dispatcher, **_app_options(path, options, check_host))
        return self._wrapped(app)

    @_runs_tasks
    async def serve_http(
        self,
        host: str = "127.0.0.1",
        port: int = 8000,
        path: str = "/mcp",
        *,
        workers: int = 1,
        task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
        **options: Unpack[HttpOptions],
    ) -> None:
        """Serve the catalog over Streamable HTTP on Hypercorn until cancelled.

        ``shutdown()`` stops it gracefully: listen streams get their results first.

        Run it with ``port = await nursery.start(server.serve_http, ...)`` to learn
        the bound port (``port=0`` picks a free one). Loopback binds check ``Host``
        against DNS rebinding; a bind beyond loopback must set ``require_auth`` and
        then accepts any ``Host`` unless ``allowed_hosts`` is given. The other
        arguments are those of ``mount``.

        Args:
            host: Address to listen on.
            port: TCP port; 0 picks a free one.
            path: The MCP endpoint.
            workers: Hypercorn Trio worker processes sharing the port (Hypercorn's
                own multi-process serving). Above 1, each worker imports this
                server by its module-level name, a state key must be configured,
                and only a ``RedisBroadcast`` reaches listens on other workers;
                cancelling stops the workers gracefully (``shutdown()`` does not).
            task_status: Receives the bound port once the server listens.
            **options: The ``HttpOptions``, as for ``mount``.

        Raises:
            McpError.InsecureBinding: if ``host`` is not loopback and ``require_auth``
                is false (checked before anything is bound).
            McpError.Transport: if Hypercorn is not installed (the ``http``
                extra) or the address cannot be bound, or with
                ``workers > 1`` if this server is not a module-level name.
            ValueError: ``StateKeyRequired``, if ``workers > 1`` and no state key
                is configured (``state_key=`` or ``TRIO_MCP_STATE_KEY``).
        """
        from ._http._hypercorn import check_binding, serve_hypercorn
        from ._loopback import is_loopback

        require_auth = options.get("require_auth", False) or bool(options.get("auth"))
        check_binding(host, require_auth=require_auth)
        shown: object = options.get("allow", ())
        if options.get("auth") is not None and isinstance(shown, list | tuple):
            shown = TokenScopes(shown)  # the start line says tokens grant too
        task_status = self._announcing(task_status, host, path, shown, workers)
        check_host = is_loopback(host) or options.get("allowed_hosts") is not None
        if workers > 1:
            from ._http._workers import serve_workers, spec_for

            await serve_workers(
                spec_for(
                    self,
                    _app_options(path, options, check_host),
                    state_key=self.state_key,
                    broadcast=self.broadcast,
                    workers=workers,
                    store=self._dispatcher.store,
                    legacy=self.legacy,
                ),
                host=host,
                port=port,
                workers=workers,
                task_status=task_status,
            )
            return
        app = self._http_app(path, options, check_host=check_host)
        self._apps.add(app)
        await serve_hypercorn(app, host=host, port=port, task_status=task_status)

    def _announcing(
        self,
        status: trio.TaskStatus[int],
        host: str,
        path: str,
        allow: object,
        workers: int = 1,
    ) -> trio.TaskStatus[int]:
        """``status``, printing the start line once the port is bound."""

        def line(port: int) -> str:
            url = f"http://{_bracketed(host)}:{port}{path}"
            if workers > 1:
                url += f" ({workers} workers)"
            return start_line(self, url, allow)

        return cast("trio.TaskStatus[int]", AnnouncingStatus(status, line))

    def run(self, transport: str = "stdio", **options: object) -> None:
        """Serve until stopped, from synchronous code: ``trio.run`` around a serve method.

        Ctrl-C (SIGINT) and SIGTERM stop it gracefully and it returns; so do the
        serve methods themselves when given to ``trio.run`` directly.

        Args:
            transport: ``"stdio"``, ``"http"`` or ``"websocket"``.
            **options: The keyword arguments of ``serve_stdio``, ``serve_http`` or
                ``serve_websocket``.

        Raises:
            McpError.InvalidArgument: for another transport (also a ValueError).
            McpError.AlreadyRunning: inside a running Trio loop, where a serve method
                is awaited instead (also a RuntimeError).

        .. versionadded:: 0.2
        """
        serves: dict[str, Callable[..., Coroutine[Any, Any, None]]] = {
            "stdio": self.serve_stdio,
            "http": self.serve_http,
            "websocket": self.serve_websocket,
        }
        if transport not in serves:
            raise InvalidArgument(
                f"server.run(transport={transport!r}): use 'stdio', 'http' or 'websocket'"
            )
        if _in_trio():
            name = "serve_" + transport
            raise AlreadyRunning(
                f"server.run() starts its own Trio loop, and one is already running "
                f"here; inside async code use `await server.{name}(...)` instead"
            )
        trio.run(functools.partial(serves[transport], **options))


def start_line(
    server: Serving, where: str, allow: object, *, handshake_era: bool = True
) -> str:
    """The one line every way of serving prints to stderr when it starts.

    The serve methods (and so ``server.run()``) and every ``trio-mcp`` command
    that serves print it, so a server that waits for its client never looks
    hung. ``handshake_era`` is False for a transport that serves 2026-07-28
    alone whatever ``legacy`` says (WebSocket).
    """
    kinds = [
        type(spec).__name__.removesuffix("Spec").lower()
        for spec in server._dispatcher.catalog.specs()
    ]
    revisions = server._dispatcher.versions if handshake_era else SUPPORTED_VERSIONS
    return banner(server.name, server.version, kinds, where, allow, revisions)


def _bracketed(host: str) -> str:
    """``host`` as a URL writes it (an IPv6 address in brackets)."""
    return f"[{host}]" if ":" in host else host


def _in_trio() -> bool:
    """Whether this thread is inside a running Trio loop."""
    try:
        trio.lowlevel.current_trio_token()
    except RuntimeError:
        return False
    return True


def _app_options(path: str, options: HttpOptions, check_host: bool) -> dict[str, Any]:
    """The keyword arguments of ``McpAsgiApp`` for ``mount``/``serve_http`` options."""
    unknown = set(options) - set(HttpOptions.__annotations__)
    fields = sorted(unknown & set(attrs.fields_dict(Limits)))
    if fields:
        spelled = ", ".join(f"{name}=..." for name in fields)
        raise InvalidArgument(
            f"{', '.join(fields)} of mount/serve_http are fields of Limits: give "
            f"limits=Limits({spelled})"
        )
    if unknown:
        raise InvalidArgument(
            f"unexpected HTTP option(s): {', '.join(sorted(unknown))}; "
            f"see trio_mcp.HttpOptions for the accepted ones"
        )
    given = {k: v for k, v in options.items() if k in LimitFields.__annotations__}
    # Warned once here; the app applies them (``http_limits``).
    limits = options.get("limits")
    Limits.of(limits, cast("LimitFields", given), deprecated_in="mount/serve_http")
    return {"path": path, "check_host": check_host, **options}

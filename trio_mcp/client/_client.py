"""``Client``: one MCP server, spoken to as values, with Trio's cancellation.

The target decides the transport (``_open_link``), the session decides the era, and
every method here is one request through it: list methods follow cursors, the call
methods read their result into a value. See ``trio_mcp.client`` for the contract.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Self

import trio

from .._errors import InvalidArgument, Timeout, Transport
from .._json import JsonObject, JsonValue
from ._jsonrpc import Incoming
from ._link import Link, leaves, request_headers
from ._session import Era, InputAnswerer, Progress, Session
from ._values import Completion, PromptResult, ReadResult, ServerInfo, ToolResult

if TYPE_CHECKING:
    from .._serving import (
        Serving as Server,
    )  # its base: _server reaches this package (upstreams)

__all__ = ["Auth", "Client", "MAX_PAGES"]

#: ``auth=``: a bearer token, or an async callable returning one (or None), asked
#: again before each request.
Auth = str | Callable[[], Awaitable[str | None]]
#: Pages a list method follows before it gives up (a server whose cursors never end).
MAX_PAGES = 1000
_ERAS = ("auto", "modern", "legacy")


def _kind(target: object) -> str:
    """``"http"``, ``"ws"``, ``"stdio"`` or ``"server"``; ``InvalidArgument`` else."""
    from .._serving import (
        Serving as Server,
    )  # its base: _server reaches this package (upstreams)

    if isinstance(target, Server):
        return "server"
    if isinstance(target, str):
        scheme = target.partition("://")[0].lower()
        if scheme in ("http", "https"):
            return "http"
        if scheme in ("ws", "wss"):
            return "ws"
        raise InvalidArgument(
            f"Client target {scheme or target[:20]!r}...: give an http(s):// or ws(s):// "
            "URL, a command as a list of strings, or a Server"
        )
    if (
        isinstance(target, Sequence)
        and target
        and all(isinstance(p, str) for p in target)
    ):
        return "stdio"
    raise InvalidArgument(
        "Client target: give an http(s):// or ws(s):// URL, a command as a non-empty "
        "list of strings (['python', 'server.py']), or a Server"
    )


#: ``on_change``: called with the method of each change the server announces.
Changed = Callable[[str], Awaitable[None]]


def _changes(on_change: Changed) -> Callable[[Incoming], Awaitable[None]]:
    """The session's hook for ``on_change``: the method of each notification."""

    async def changed(incoming: Incoming) -> None:
        await on_change(incoming.method)

    return changed


class Client:
    """A client of one MCP server: ``async with Client(target) as client:``.

    ``target`` is an ``http(s)://`` URL (Streamable HTTP), a ``ws(s)://`` URL (the
    WebSocket transport), a command (a list of strings, started as a stdio
    subprocess and stopped when the block exits) or a ``Server`` (in process, through
    real JSON). ``era="auto"`` speaks 2026-07-28 when the server answers
    ``server/discover``, else a handshake-era session (``"modern"`` or ``"legacy"``
    forces one). ``headers`` and ``auth`` (a bearer token, or an async callable
    returning one, asked per request) go to the target alone. ``timeout`` is the
    deadline of opening and of every call without its own. ``on_input`` answers the
    server's input requests (an async callable taking an ``InputRequest``, returning
    its answer); without it the client declares no elicitation, sampling or roots.
    ``progress`` receives ``done, total, message`` of every call. ``on_change`` (an
    async callable) receives the method of each notification the server sends
    unasked about what it serves (``notifications/tools/list_changed``, ...,
    ``notifications/resources/updated``): a handshake-era session's, or a listen
    stream's (``request("subscriptions/listen", ...)``, whose
    ``notifications/subscriptions/acknowledged`` says changes are followed from
    then on).

    Raises (from its methods):
        McpError.Remote: the server answered with a JSON-RPC error.
        McpError.Timeout: no reply within the deadline (a ``Transport``).
        McpError.Transport: the transport failed, the reply was not JSON-RPC, or it
            was past 4 MiB.
    """

    def __init__(
        self,
        target: str | Sequence[str] | Server,
        *,
        headers: Mapping[str, str] | None = None,
        auth: Auth | None = None,
        timeout: float = 30.0,
        era: Era = "auto",
        on_input: InputAnswerer | None = None,
        progress: Progress | None = None,
        on_change: Changed | None = None,
    ) -> None:
        self._kind = _kind(target)
        if era not in _ERAS:
            raise InvalidArgument(f"era={era!r}: use 'auto', 'modern' or 'legacy'")
        if not timeout > 0:
            raise InvalidArgument(
                f"timeout={timeout!r}: give a positive number of seconds"
            )
        self.target = target
        self.headers = dict(headers or {})
        self._auth = auth
        self.timeout = float(timeout)
        self.era: Era = era
        self.on_input = on_input
        self.progress = progress
        self.on_change = on_change
        self._session: Session | None = None
        self._stack: contextlib.AsyncExitStack | None = None

    # -- opening and closing ----------------------------------------------------
    async def _token(self) -> str | None:
        if self._auth is None or isinstance(self._auth, str):
            return self._auth
        return await self._auth()

    async def __aenter__(self) -> Self:
        stack = contextlib.AsyncExitStack()
        await stack.__aenter__()
        try:
            # No deadline scope around entering the link: its nursery outlives this
            # method. Each opener bounds its own connecting; open() bounds the rest.
            link = await stack.enter_async_context(self._open_link())
            session = Session(
                link,
                era=self.era,
                timeout=self.timeout,
                on_input=self.on_input,
                progress=self.progress,
            )
            if self.on_change is not None:
                session.on_change = _changes(self.on_change)
            await session.open()
        except BaseException as exc:
            await stack.aclose()
            if (
                isinstance(exc, BaseExceptionGroup)
                and len(set(map(id, leaves(exc)))) == 1
            ):
                raise leaves(exc)[0] from None
            raise
        self._session, self._stack = session, stack
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        stack, self._stack, self._session = self._stack, None, None
        if stack is None:
            return
        try:
            await stack.__aexit__(exc_type, exc, tb)
        except BaseExceptionGroup as group:
            # The link's nursery wraps what the block raised: hand it back as raised,
            # so ``except McpError.Remote`` around the block works.
            if exc is not None and all(leaf is exc for leaf in leaves(group)):
                raise exc from None
            raise

    @contextlib.asynccontextmanager
    async def _open_link(self) -> AsyncIterator[Link]:
        from . import _streams

        if self._kind == "server":
            from .._serving import (
                Serving as Server,
            )  # its base: _server reaches this package (upstreams)

            assert isinstance(self.target, Server)
            async with _streams.open_in_process(self.target) as link:
                yield link
        elif self._kind == "stdio":
            assert not isinstance(self.target, str)
            async with _streams.open_stdio(list(self.target)) as link:  # type: ignore[arg-type]
                yield link
        elif self._kind == "ws":
            assert isinstance(self.target, str)
            headers = list(self.headers.items())
            token = await self._token()
            if token is not None:
                headers.append(("Authorization", f"Bearer {token}"))
            from ._websocket import open_websocket

            async with open_websocket(
                self.target, _shown(self.target), headers, self.timeout
            ) as link:
                yield link
        else:
            assert isinstance(self.target, str)
            async with self._http_link(self.target) as link:
                yield link

    @contextlib.asynccontextmanager
    async def _http_link(self, url: str) -> AsyncIterator[Link]:
        from ._httplink import HttpLink

        async with trio.open_nursery() as nursery:
            link = HttpLink(url, nursery, headers=self.headers, token=self._token)
            try:
                yield link
            finally:
                with trio.CancelScope(shield=True):
                    await link.end_session()
                    await link.aclose()
                nursery.cancel_scope.cancel()

    @property
    def _open(self) -> Session:
        if self._session is None:
            raise InvalidArgument(
                "use the client inside 'async with Client(...) as client:'"
            )
        return self._session

    @property
    def server(self) -> ServerInfo:
        """What the server said of itself: ``name``, ``version``, ``revision``,
        ``capabilities``, ``instructions``."""
        info = self._open.info
        assert info is not None
        return info

    # -- requests ---------------------------------------------------------------
    async def request(
        self,
        method: str,
        params: Mapping[str, JsonValue] | None = None,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - the contract's deadline, applied with trio
        progress: Progress | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> JsonObject:
        """Send any request; return its result object as received.

        The era's ``_meta`` is added (merged into ``params["_meta"]``), input rounds
        are answered, and the errors are those of the other methods. This is what
        a proxy relays a result through, unchanged. ``headers`` are sent with this
        request alone, beside the client's (Streamable HTTP only: a proxy's
        forwarded headers).
        """
        reset = request_headers.set(tuple(headers.items()) if headers else ())
        try:
            return await self._open.request(
                method, params, timeout=timeout, progress=progress
            )
        finally:
            request_headers.reset(reset)

    async def _list(self, method: str, key: str) -> list[JsonObject]:
        """Every page of ``method``: at most ``MAX_PAGES``, all within the client's
        timeout (one deadline for the whole list, not one per page)."""
        items: list[JsonObject] = []
        params: JsonObject = {}
        with trio.move_on_after(self.timeout):
            for _ in range(MAX_PAGES):
                result = await self.request(method, params)
                items += _page(result, method, key)
                cursor = result.get("nextCursor")
                if cursor is None:
                    return items
                if not isinstance(cursor, str):
                    raise Transport(f"the {method} result's nextCursor is not a string")
                params = {"cursor": cursor}
            raise Transport(f"{method}: the server had more than {MAX_PAGES} pages")
        raise Timeout(
            f"{method}: {len(items)} entries listed, the rest not within "
            f"{self.timeout:g} s"
        )

    async def list_tools(self) -> list[JsonObject]:
        """Every tool of every page of ``tools/list``, each as the server sent it."""
        tools = await self._list("tools/list", "tools")
        _remember_param_headers(self._open.link, tools)
        return tools

    async def list_resources(self) -> list[JsonObject]:
        """Every resource of every page of ``resources/list``."""
        return await self._list("resources/list", "resources")

    async def list_resource_templates(self) -> list[JsonObject]:
        """Every template of every page of ``resources/templates/list``."""
        return await self._list("resources/templates/list", "resourceTemplates")

    async def list_prompts(self) -> list[JsonObject]:
        """Every prompt of every page of ``prompts/list``."""
        return await self._list("prompts/list", "prompts")

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, JsonValue] | None = None,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - the contract's deadline, applied with trio
        progress: Progress | None = None,
    ) -> ToolResult:
        """Call a tool; a tool's own failure is a result with ``is_error`` set.

        ``timeout`` (else the client's) is the call's deadline; ``progress`` (else the
        client's) receives this call's progress.
        """
        params: JsonObject = {"name": name, "arguments": dict(arguments or {})}
        return ToolResult.of(await self._call("tools/call", params, timeout, progress))

    async def _call(
        self,
        method: str,
        params: JsonObject,
        timeout: float | None,  # noqa: ASYNC109 - the contract's deadline, applied with trio
        progress: Progress | None,
    ) -> JsonObject:
        from .._errors import Remote

        try:
            return await self.request(
                method, params, timeout=timeout, progress=progress
            )
        except Remote as exc:
            link = self._open.link
            if (
                exc.code != -32020
                or method != "tools/call"
                or not hasattr(link, "param_headers")
            ):
                raise
        # Revision 2026-07-28: a header mismatch may mean stale x-mcp-header
        # declarations; refresh them from tools/list and send once more.
        await self.list_tools()
        return await self.request(method, params, timeout=timeout, progress=progress)

    async def read_resource(
        self,
        uri: str,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - the contract's deadline, applied with trio
    ) -> ReadResult:
        """Read a resource (a missing one is ``McpError.Remote``, -32602 or -32002)."""
        return ReadResult.of(
            await self._call("resources/read", {"uri": uri}, timeout, None)
        )

    async def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, str] | None = None,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - the contract's deadline, applied with trio
    ) -> PromptResult:
        """Get a prompt with its arguments."""
        params: JsonObject = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        return PromptResult.of(await self._call("prompts/get", params, timeout, None))

    async def complete(
        self,
        ref: Mapping[str, JsonValue],
        argument: str,
        value: str,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - the contract's deadline, applied with trio
    ) -> Completion:
        """Ask for completions of ``argument`` (being typed as ``value``) of ``ref``
        (``{"type": "ref/prompt", "name": ...}`` or ``{"type": "ref/resource",
        "uri": ...}``)."""
        params: JsonObject = {
            "ref": dict(ref),
            "argument": {"name": argument, "value": value},
        }
        return Completion.of(
            await self._call("completion/complete", params, timeout, None)
        )


def _page(result: JsonObject, method: str, key: str) -> list[JsonObject]:
    page = result.get(key)
    if not isinstance(page, list) or not all(isinstance(i, dict) for i in page):
        raise Transport(f"the {method} result has no list of objects under {key!r}")
    return [i for i in page if isinstance(i, dict)]


def _remember_param_headers(link: Link, tools: list[JsonObject]) -> None:
    """Keep each tool's ``x-mcp-header`` parameters for the HTTP link's headers."""
    table = getattr(link, "param_headers", None)
    if table is None:
        return
    from .._protocol._headers import param_headers

    table.clear()
    for tool in tools:
        name, schema = tool.get("name"), tool.get("inputSchema")
        if isinstance(name, str) and isinstance(schema, dict):
            headers, problems = param_headers(schema)
            if not problems:
                table[name] = headers


def _shown(url: str) -> str:
    """``url`` as errors name it: without user information or query."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{netloc}{port}{parts.path}"

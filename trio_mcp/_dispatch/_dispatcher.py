"""One request in, one reply out; notifications on the side. Knows no transport.

The checks run in the order of MCP revision 2026-07-28, "how a server processes a
request": removed methods, ``_meta``, (HTTP) the version header, the version, (HTTP)
routing headers, the method and its capability, the log level; then the method
runs. A check or method that cannot go on raises ``Failure``, which ``handle``
answers with its JSON-RPC error.

The call methods (``tools/call``, ``prompts/get``, ``resources/read``,
``completion/complete``) build one ``Call`` and run it through the chain of the
``Edge`` the request came through (``_runner``), which returns an ``Ending`` for
every way a call can end; ``handle`` turns it into the reply in one place
(``_reply``). Anything else that escapes a method is a bug of ours: -32603 with a
logged reference.

A transport comes in through an ``Edge`` (``Dispatcher.edge``), made once with the
steps it contributes to every call (HTTP: room, rate limit, step-up); its chains
are built then, so a call assembles nothing.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Protocol

import trio

from .. import _metrics, _otel
from .._authority import Receipt, ReceiptSink
from .._changes import Broadcast, Change, ListKind
from .._changes._listen import LISTEN_METHOD, BadFilter, honour, stream
from .._context import Emit, no_emit
from .._json import JsonObject, encode_message
from .._protocol import _wire as wire
from .._protocol._jsonrpc import Request
from .._protocol._state import StateSealer
from .._store import MemoryStore, Store
from ._call import Ending, Middleware
from ._calls import Calls, TaskHost, new_call
from ._catalog import Catalog
from ._checks import check
from ._complete import completable, completion_call
from ._edge import Admission, Edge
from ._logs import may_log
from ._pages import InvalidCursor
from ._request import Caller as Caller
from ._request import Checked, Failure, Reply
from ._rounds import Answered
from ._runner import Runner, finish_result, log_receipt

__all__ = ["Caller", "Dispatcher", "Edge", "Reply"]

log = logging.getLogger("trio_mcp")

LIST_TTL_MS = 3_600_000


#: A method: a result to finish and encode, a call's ending, or an encoded reply.
Handler = Callable[[Checked], Awaitable["JsonObject | Ending | Reply"]]


class SkillHost(Protocol):
    """The skills extension (SEP-2640), as the dispatcher sees it
    (``_skills.SkillSet``, which imports this package, never the other way)."""

    def __bool__(self) -> bool:
        """Whether any skill is served."""

    def capability(self) -> JsonObject:
        """The extension's settings in ``capabilities.extensions``."""

    def methods(
        self,
        cache_scope: Callable[[Caller], str],
        encode_result: Callable[[str | int, JsonObject], bytes],
    ) -> Mapping[str, Handler]:
        """``skills/list``, ``skills/get`` and ``resources/directory/read``."""


#: Makes the task host, given how it announces a task's change and the store.
TaskHostFactory = Callable[[Callable[[Change], object], Store], TaskHost]


class Dispatcher(Calls):
    """Answers requests for one catalog. Transports call ``handle``."""

    def __init__(
        self,
        catalog: Catalog,
        *,
        name: str,
        version: str,
        instructions: str | None = None,
        receipts: ReceiptSink | None = None,
        sealer: StateSealer | None = None,
        dynamic: bool = False,
        broadcast: Broadcast | None = None,
        store: Store | None = None,
        skills: SkillHost | None = None,
        tasks: TaskHostFactory,
        middleware: Sequence[Middleware] = (),
    ) -> None:
        super().__init__(catalog)
        self.store = store if store is not None else MemoryStore()
        """State shared beyond one request: rate-limit buckets (and task records)."""
        self.skills = skills
        """The skills extension's skills (SEP-2640), when any are served."""
        self.dynamic = dynamic
        """Whether the catalog may be replaced (then ``listChanged`` is advertised)."""
        self.broadcast = broadcast if broadcast is not None else Broadcast()
        """Changes for listen streams: list changes and resource updates."""
        self.tasks = tasks(self._publish_local, self.store)
        """Tool calls running as tasks (the tasks extension), and their nursery."""
        self.services: Callable[[], AbstractAsyncContextManager[None]] | None = None
        """What runs beside the serving for as long as it lasts (a gateway's
        upstreams, followed), entered by ``open``."""
        self.server_info: JsonObject = {"name": name, "version": version}
        sealer = sealer if sealer is not None else StateSealer.from_config()
        self.runner = Runner(
            sealer,
            receipts,
            self.server_info,
            tuple(middleware),
            Answered(self.store, sealer.ttl),
        )
        """The runner's own steps; ``Edge`` builds the chains with them."""
        self.instructions = instructions
        self.versions: tuple[str, ...] = wire.SUPPORTED_VERSIONS
        """What ``server/discover`` lists: with the handshake-era revisions of a
        dual-era server (``Server(legacy=True)``), served by its legacy edges."""
        self.plain = Edge(self)
        """The edge of transports that add no steps of their own."""
        self.capabilities = self._capabilities()
        self.methods = self._methods()
        self.tasks.attach(self)

    def _methods(self) -> dict[str, Handler]:
        methods: dict[str, Handler] = {
            "server/discover": self._discover,
            LISTEN_METHOD: self._listen,
        }
        if "tools" in self.capabilities:
            methods["tools/list"] = self._lister("tools/list")
            methods["tools/call"] = self._tools_call
        if "resources" in self.capabilities:
            methods["resources/list"] = self._lister("resources/list")
            methods["resources/templates/list"] = self._lister(
                "resources/templates/list"
            )
            methods["resources/read"] = self._resources_read
        if "prompts" in self.capabilities:
            methods["prompts/list"] = self._lister("prompts/list")
            methods["prompts/get"] = self._prompts_get
        if "completions" in self.capabilities:
            methods["completion/complete"] = self._complete
        if self.catalog.has_task_tools:
            methods.update(self.tasks.methods())
        if self.skills:
            methods.update(self.skills.methods(self._cache_scope, self.encode_result))
        return methods

    def _capabilities(self) -> JsonObject:
        # A dynamic catalog serves every kind, even while empty, so capabilities
        # (and the listen filters they allow) stay put when the catalog changes.
        dynamic = self.dynamic
        caps: JsonObject = {}
        catalog = self.catalog
        if dynamic or catalog.relayed or self._logs():
            # Only what can send ``ToolContext.log`` (F14, issue 44): a dynamic
            # catalog may gain it, an upstream's logs are relayed.
            caps["logging"] = {}
        if self.catalog.tools or dynamic:
            caps["tools"] = {"listChanged": dynamic}
        if self.catalog.resources or dynamic:
            caps["resources"] = {
                "subscribe": any(r.spec.updatable for r in self.catalog.resources),
                "listChanged": dynamic,
            }
        if self.catalog.prompts or dynamic:
            caps["prompts"] = {"listChanged": dynamic}
        if completable(self.catalog):
            caps["completions"] = {}
        if self.catalog.has_task_tools:
            caps["extensions"] = {wire.TASKS_EXTENSION: {}}
        if self.skills:
            extensions = caps.setdefault("extensions", {})
            assert isinstance(extensions, dict)
            extensions[wire.SKILLS_EXTENSION] = self.skills.capability()
        if self.catalog.has_views:  # MCP Apps (SEP-1865): no server settings
            extensions = caps.setdefault("extensions", {})
            assert isinstance(extensions, dict)
            extensions[wire.UI_EXTENSION] = {}
        return caps

    @asynccontextmanager
    async def open(self) -> AsyncIterator[None]:
        """Run what serving needs beside the requests for the block: the task
        nursery (the tasks extension) and the ``services``. Re-entrant, as both are."""
        async with self.tasks.open():
            if self.services is None:
                yield
            else:
                async with self.services():
                    yield

    # -- changes: a new catalog, updated resources --------------------------------
    def replace(self, catalog: Catalog) -> list[ListKind]:
        """Serve ``catalog`` from now on; announce and return the kinds whose lists changed.

        The swap has no checkpoint, so no request sees half of it.
        """
        old = self.catalog
        changed: list[ListKind] = []
        if old.wire_tools != catalog.wire_tools:
            changed.append("tools")
        if old.wire_prompts != catalog.wire_prompts:
            changed.append("prompts")
        if (old.wire_resources, old.wire_templates) != (
            catalog.wire_resources,
            catalog.wire_templates,
        ):
            changed.append("resources")
        self.catalog = catalog
        self.capabilities = self._capabilities()
        self.methods = self._methods()
        for kind in changed:
            self.broadcast.publish(Change.list_changed(kind))
        return changed

    def _logs(self) -> bool:
        """Whether a declaration or a middleware step can log (``_logs``)."""
        catalog = self.catalog
        declared = (*catalog.tool_list, *catalog.resource_list, *catalog.prompt_list)
        return may_log((*declared, *self.runner.middleware))

    def _publish_local(self, change: Change) -> None:
        """Offer a change to this process's listen streams (a task's status)."""
        self.broadcast.publish_local(change)

    def publish(self, change: Change) -> None:
        """Publish a resource update to the listen streams subscribed to its URI.

        Raises:
            ValueError: if no ``updatable=True`` declaration serves the URI.
        """
        if change.uri is not None and not self.catalog.is_updatable(change.uri):
            raise ValueError(
                f"resource '{change.uri}' is not served by an updatable declaration; "
                "declare it with @resource(..., updatable=True)"
            )
        self.broadcast.publish(change)

    # -- the entry point ------------------------------------------------------------
    def edge(
        self, steps: Sequence[Middleware] = (), admission: Admission | None = None
    ) -> Edge:
        """The way in of a transport that adds ``steps`` to every call, after
        ``account`` and before ``grant`` (``_runner``), the ``admission`` step
        first."""
        if not steps and admission is None:
            return self.plain
        return Edge(self, steps, admission)

    async def handle(
        self,
        request: Request,
        caller: Caller,
        emit: Emit = no_emit,
        scope: trio.CancelScope | None = None,
        *,
        edge: Edge | None = None,
    ) -> Reply:
        """Answer one request; never raises (but ``trio.Cancelled``).

        Args:
            request: The parsed request.
            caller: The principal, grants and (HTTP) headers.
            emit: Sends a notification tied to the request; by default they drop.
            scope: The cancel scope the transport runs the request in, if any.
            edge: The edge it came through (``edge()``); the plain one by default.
        """
        raw_meta = (
            request.params.get("_meta") if isinstance(request.params, dict) else None
        )
        method = request.method
        if method not in self.methods:
            # A method this server serves, else _OTHER, as a metric label and a
            # span name: no request can add a series or a span name (as the
            # OpenTelemetry HTTP conventions do for request methods).
            method = _metrics.OTHER
        measure = _metrics.start(method)
        error_code: int | None = None
        with _otel.request_span(
            method, raw_meta if isinstance(raw_meta, dict) else None, request.id
        ):
            try:
                reply, error_code = await self._answer(
                    request, caller, emit, scope, edge or self.plain
                )
                return reply
            finally:
                if measure is not None:
                    _metrics.finish(measure, self._metric_name(request), error_code)

    async def _answer(
        self,
        request: Request,
        caller: Caller,
        emit: Emit,
        scope: trio.CancelScope | None,
        edge: Edge,
    ) -> tuple[Reply, int | None]:
        """The checks, then the method: the reply, and its JSON-RPC error code."""
        try:
            checked = self.check(request, caller, edge, emit, scope)
            result = await self.methods[checked.method](checked)
            if isinstance(result, Ending):
                code = None if result.error is None else _code(result)
                return self._reply(checked.id, result), code
            if isinstance(result, Reply):
                return result, None
            body = self.encode_result(checked.id, result)
            return Reply(body, values=(result, None)), None
        except Failure as failure:
            _otel.annotate({"rpc.jsonrpc.error_code": failure.code})
            message = failure.fault(request.id).to_message()
            status = failure.http_status
            reply = Reply(
                encode_message(message), status, values=(None, message["error"])
            )
            return reply, failure.code
        except Exception as exc:
            return _internal(request, exc), wire.INTERNAL_ERROR

    def _metric_name(self, request: Request) -> str | None:
        """The tool or prompt a request names as a metric label: the catalog's
        name, ``_OTHER`` for one it does not have; None for other methods."""
        method = request.method
        if method == "tools/call":
            table: Mapping[str, object] = self.catalog.tools
        elif method == "prompts/get":
            table = self.catalog.prompts
        else:
            return None
        params = request.params
        name = params.get("name") if isinstance(params, dict) else None
        return name if isinstance(name, str) and name in table else _metrics.OTHER

    def _reply(self, request_id: str | int, ending: Ending) -> Reply:
        """The reply to a call that ended with ``ending``: its result or its error.

        Raises:
            ValueError: for a result a step built that is not JSON (NaN, infinity);
                TypeError for one that is not a JSON value at all.
        """
        encoded_id = (
            b"%d" % request_id if type(request_id) is int else _encoded_id(request_id)
        )
        if ending.error is not None:
            _otel.annotate({"rpc.jsonrpc.error_code": _code(ending)})
            body = b'{"jsonrpc":"2.0","id":%s,"error":%s}' % (
                encoded_id,
                encode_message(ending.error),
            )
        else:
            if ending.body is None and ending.result is not None:
                finish_result(ending.result, self.server_info)
            body = b'{"jsonrpc":"2.0","id":%s,"result":%s}' % (
                encoded_id,
                ending.encoded(),
            )
        values = (ending.result, ending.error)
        if not ending.headers:
            return Reply(body, ending.http_status, (), values)
        headers = tuple(
            (k.encode("latin-1"), v.encode("latin-1")) for k, v in ending.headers
        )
        return Reply(body, ending.http_status, headers, values)

    def log_receipt(self, receipt: Receipt) -> None:
        """Log a receipt on ``trio_mcp.receipts`` (a refusal made outside a call)."""
        log_receipt(receipt)

    async def deliver(self, receipt: Receipt) -> None:
        """Hand a receipt to the ``receipts=`` sink, shielded; never fails."""
        await self.runner.deliver(receipt)

    def encode_result(self, request_id: str | int, result: JsonObject) -> bytes:
        """The response carrying ``result``, with ``resultType`` and serverInfo, encoded.

        Raises:
            ValueError: for NaN or infinity; TypeError for a value that is not JSON.
        """
        finish_result(result, self.server_info)
        return encode_message(wire.result_message(request_id, result))

    def check(
        self,
        request: Request,
        caller: Caller,
        edge: Edge,
        emit: Emit = no_emit,
        scope: trio.CancelScope | None = None,
    ) -> Checked:
        """Run the ordered checks of the revision (``_checks.check``) for a method
        of this dispatcher.

        Raises:
            Failure: with the first failing check's error.
        """
        return check(request, caller, edge, emit, scope, self.methods, self.versions)

    # -- discovery and lists --------------------------------------------------------------
    async def _discover(self, request: Checked) -> JsonObject:
        result: JsonObject = {
            "supportedVersions": list(self.versions),
            "capabilities": self.capabilities,
        }
        if self.instructions is not None:
            result["instructions"] = self.instructions
        result["ttlMs"] = LIST_TTL_MS
        result["cacheScope"] = self._cache_scope(request.caller)
        return result

    def _cache_scope(self, caller: Caller) -> str:
        """``private`` whenever any guard could make the answer depend on who asks.

        RFC 156 Protocol 6: a declaration of any kind with ``caps=``, a per-principal
        ``allow=`` callable, or an authenticated caller (every request of a mount with
        ``require_auth=True`` has a principal) make discovery and every list private.
        """
        guarded = self.catalog.guarded() or callable(caller.allow)
        return "private" if guarded or caller.principal is not None else "public"

    def _lister(self, method: str) -> Handler:
        """The handler of a list method: a page of the catalog's entries.

        The page's items were encoded once; each reply encodes only its envelope
        (id, cursor, cache scope, server info) and splices them in.
        """

        async def handler(request: Checked) -> Reply:
            pages = self.catalog.pages_for(method, request.caller.visible)
            try:
                result, offset = pages.result(request.params)
            except InvalidCursor as exc:
                raise Failure.invalid(f"invalid cursor: {exc}") from None
            result["ttlMs"] = LIST_TTL_MS
            result["cacheScope"] = self._cache_scope(request.caller)
            return Reply(pages.splice(self.encode_result(request.id, result), offset))

        return handler

    async def _complete(self, request: Checked) -> Ending:
        target, name, arguments = completion_call(self.catalog, request)
        call = new_call(request, target, name, arguments)
        return await request.edge.chain(call)

    async def _listen(self, request: Checked) -> JsonObject:
        requested = request.params.get("notifications")
        try:
            wanted = honour(requested, self.capabilities, self.catalog.is_updatable)
        except BadFilter as exc:
            raise Failure.invalid(str(exc)) from None
        if self.catalog.has_task_tools:
            task_ids = await self.tasks.listen_filter(requested, request)
            if task_ids:
                wanted.add("taskIds", list(task_ids), map(Change.task, task_ids))
        return await stream(request, wanted, self.broadcast, self.tasks.view)


def _encoded_id(request_id: str | int) -> bytes:
    """A request id as JSON: an integer's digits directly, a string through the
    encoder (``classify`` admits no other type, not even ``bool``)."""
    if type(request_id) is int:
        return b"%d" % request_id
    return encode_message(request_id)


def _code(ending: Ending) -> int | None:
    """The JSON-RPC error code an ending answers with, if it is an error."""
    code = None if ending.error is None else ending.error.get("code")
    return code if isinstance(code, int) else None


def _internal(request: Request, exc: Exception) -> Reply:
    """-32603 for a failure outside any call (a bug of ours): logged with a reference."""
    failure = Failure.unexpected(exc, "%s, outside any call,", request.method)
    fault = failure.fault(request.id)
    return Reply(encode_message(fault.to_message()), fault.http_status)

"""Streamable HTTP over a real Hypercorn server on 127.0.0.1 (issue #5).

Every test starts the server in-process with ``nursery.start(server.serve_http, ...)``
(or Hypercorn serving ``server.mount()``) on port 0 and talks to it through real
sockets, with httpx or raw bytes. Every JSON-RPC message the server sends is
validated against the 2026-07-28 schema.
"""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import Callable
from typing import Any

import httpx
import pytest
import trio
from support import META, VERSION, port_of, serving, serving_app
from support.conn_peer import read_reply
from support.mcp_http import call_tool, checked, headers_for, post, request_body
from support.sse import sse_messages
from support.tools import echo, steps
from support.waiting import Forever

from trio_mcp import (
    Capability,
    Limits,
    McpError,
    Receipt,
    Server,
    ToolContext,
    tool,
)
from trio_mcp._http._app import McpAsgiApp
from trio_mcp.testing import check_message


# -- the catalog under test ----------------------------------------------------------
@tool
def who_am_i() -> str:
    """Return the id of the principal the transport found."""
    return str(ToolContext.current().principal_id)


@tool
def needs_sampling() -> str:
    """Demand the client's sampling capability."""
    ToolContext.current().require_client({"sampling": {}})
    return "sampled"


write = Capability("write", description="Change things")


@tool(caps=[write])
def guarded() -> str:
    """Only for callers granted 'write'."""
    return "written"


def make_server(**kwargs: Any) -> Server:
    return Server(
        "http-test",
        "1.0",
        tools=[echo, steps, who_am_i, needs_sampling, guarded],
        **kwargs,
    )


# -- helpers -------------------------------------------------------------------------
# -- plain requests ------------------------------------------------------------------
async def test_discover_is_answered_with_application_json() -> None:
    """Spec: a single JSON-RPC response may be sent as application/json."""
    async with serving(make_server()) as url, httpx.AsyncClient() as client:
        response = await post(client, url, "server/discover")

    assert response.status_code == 200
    message = checked(response, "server/discover")
    assert message["result"]["supportedVersions"] == [VERSION]


async def test_tool_call_result_over_http() -> None:
    async with serving(make_server()) as url, httpx.AsyncClient() as client:
        response = await call_tool(client, url, "echo", {"text": "hi"})

    assert response.status_code == 200
    assert checked(response, "tools/call")["result"]["structuredContent"] == "hi"


@pytest.mark.parametrize("verb", ["GET", "DELETE", "PUT"])
async def test_only_post_is_accepted_on_the_endpoint(verb: str) -> None:
    """Spec: GET and DELETE SHOULD get 405 (no GET stream, no sessions)."""
    async with serving(make_server()) as url, httpx.AsyncClient() as client:
        response = await client.request(verb, url + "/mcp")

    assert response.status_code == 405
    assert response.headers["allow"] == "POST"


async def test_healthz_answers_200() -> None:
    """Our choice (api.md): the mounted app answers GET /healthz."""
    async with serving(make_server()) as url, httpx.AsyncClient() as client:
        response = await client.get(url + "/healthz")

    assert response.status_code == 200


async def test_other_paths_are_404() -> None:
    async with serving(make_server()) as url, httpx.AsyncClient() as client:
        response = await client.post(url + "/elsewhere", content=b"{}")

    assert response.status_code == 404


async def test_custom_path_serves_mcp_there() -> None:
    async with (
        serving(make_server(), path="/api/v1/mcp") as url,
        httpx.AsyncClient() as client,
    ):
        response = await client.post(
            url + "/api/v1/mcp",
            json=request_body("server/discover"),
            headers=headers_for("server/discover"),
        )

    assert response.status_code == 200
    checked(response, "server/discover")


# -- errors before dispatch -----------------------------------------------------------
async def test_parse_error_is_400_with_32700_and_no_id() -> None:
    async with serving(make_server()) as url, httpx.AsyncClient() as client:
        response = await client.post(
            url + "/mcp", content=b"{not json", headers=headers_for("tools/list")
        )

    assert response.status_code == 400
    message = checked(response, None)
    assert message["error"]["code"] == -32700
    assert "id" not in message


async def test_batch_is_400_with_32600() -> None:
    """Spec: batches were removed; the body must be a single message."""
    async with serving(make_server()) as url, httpx.AsyncClient() as client:
        response = await client.post(
            url + "/mcp",
            json=[request_body("tools/list")],
            headers=headers_for("tools/list"),
        )

    assert response.status_code == 400
    assert checked(response, None)["error"]["code"] == -32600


async def oversized_call() -> httpx.Response:
    """A 2000-character echo to a server that reads at most 1000 bytes."""
    async with (
        serving(make_server(), limits=Limits(max_message_bytes=1000)) as url,
        httpx.AsyncClient() as client,
    ):
        return await call_tool(client, url, "echo", {"text": "x" * 2000})


async def test_oversized_body_is_413_with_32600_and_no_id() -> None:
    response = await oversized_call()

    assert response.status_code == 413
    message = checked(response, None)
    assert message["error"]["code"] == -32600
    assert "id" not in message


async def test_the_413_closes_the_connection_so_no_request_is_lost_on_it() -> None:
    """The unread rest of the body makes the connection unusable: say so.

    Without ``Connection: close`` a keep-alive client sent its next request on the
    connection the server was closing, and lost it (about 1 in 500 requests after an
    oversized one, found by the HTTP wire fuzzer).
    """
    response = await oversized_call()

    assert response.status_code == 413
    assert "close" == response.headers.get("connection")


async def test_oversized_chunked_body_is_answered_before_it_ends() -> None:
    """No Content-Length: the body is read incrementally and reading stops at the limit.

    The client sends 5 KiB of a chunked body and never ends it; the 413 arrives anyway.
    """
    async with serving(make_server(), limits=Limits(max_message_bytes=4096)) as url:
        port = port_of(url)
        head = "".join(f"{k}: {v}\r\n" for k, v in headers_for("tools/list").items())
        chunk = b"400\r\n" + b" " * 1024 + b"\r\n"
        with trio.fail_after(10):
            stream = await trio.open_tcp_stream("127.0.0.1", port)
            await stream.send_all(
                f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n{head}"
                "transfer-encoding: chunked\r\n\r\n".encode()
            )
            for _ in range(5):
                await stream.send_all(chunk)
            status, body = await read_reply(stream)
            await stream.aclose()

    assert status == 413
    message = json.loads(body)
    check_message(message, None)
    assert message["error"]["code"] == -32600


async def test_notification_is_accepted_with_202_and_empty_body() -> None:
    """Spec: a POSTed notification gets 202 Accepted with no body."""
    note = {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": 1},
    }
    async with serving(make_server()) as url, httpx.AsyncClient() as client:
        response = await client.post(url + "/mcp", json=note)

    assert response.status_code == 202
    assert response.content == b""


# -- errors from the dispatcher's ordered checks ---------------------------------------
async def test_missing_meta_is_400_with_32602() -> None:
    body = {"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {}}
    async with serving(make_server()) as url, httpx.AsyncClient() as client:
        response = await client.post(
            url + "/mcp", json=body, headers=headers_for("tools/list")
        )

    assert response.status_code == 400
    message = checked(response, "tools/list")
    assert (message["error"]["code"], message["id"]) == (-32602, 5)


async def test_missing_protocol_version_header_is_400_with_32020() -> None:
    headers = headers_for("tools/list")
    del headers["mcp-protocol-version"]
    async with serving(make_server()) as url, httpx.AsyncClient() as client:
        response = await post(client, url, "tools/list", headers=headers)

    assert response.status_code == 400
    assert checked(response, "tools/list")["error"]["code"] == -32020


async def test_unsupported_version_is_400_with_32022() -> None:
    body = request_body("server/discover")
    body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = "v999.0.0"
    headers = headers_for("server/discover", **{"mcp-protocol-version": "v999.0.0"})
    async with serving(make_server()) as url, httpx.AsyncClient() as client:
        response = await client.post(url + "/mcp", json=body, headers=headers)

    assert response.status_code == 400
    error = checked(response, "server/discover")["error"]
    assert (
        error["code"],
        error["data"],
    ) == (-32022, {"supported": [VERSION], "requested": "v999.0.0"})


async def test_mcp_method_mismatch_is_400_with_32020() -> None:
    async with serving(make_server()) as url, httpx.AsyncClient() as client:
        response = await post(
            client, url, "tools/list", headers=headers_for("prompts/list")
        )

    assert response.status_code == 400
    assert checked(response, "tools/list")["error"]["code"] == -32020


async def test_mcp_name_mismatch_is_400_with_32020() -> None:
    async with serving(make_server()) as url, httpx.AsyncClient() as client:
        response = await call_tool(
            client, url, "echo", {"text": "a"}, routed="who_am_i"
        )

    assert response.status_code == 400
    assert checked(response, "tools/call")["error"]["code"] == -32020


async def test_mcp_name_in_base64_sentinel_form_is_decoded() -> None:
    """Spec: servers MUST decode ``=?base64?...?=`` before comparing."""
    encoded = "=?base64?" + base64.b64encode(b"echo").decode() + "?="
    async with serving(make_server()) as url, httpx.AsyncClient() as client:
        response = await call_tool(client, url, "echo", {"text": "a"}, routed=encoded)

    assert response.status_code == 200
    checked(response, "tools/call")


async def test_unknown_method_is_404_with_32601() -> None:
    """Spec: -32601 MUST be HTTP 404 (the JSON-RPC body tells it from a plain 404)."""
    async with serving(make_server()) as url, httpx.AsyncClient() as client:
        response = await post(client, url, "no/such/method")

    assert response.status_code == 404
    assert checked(response, None)["error"]["code"] == -32601


async def test_missing_client_capability_is_400_with_32021() -> None:
    async with serving(make_server()) as url, httpx.AsyncClient() as client:
        response = await post(
            client, url, "tools/call", {"name": "needs_sampling"}, name="needs_sampling"
        )

    assert response.status_code == 400
    error = checked(response, "tools/call")["error"]
    assert (
        error["code"],
        error["data"],
    ) == (-32021, {"requiredCapabilities": {"sampling": {}}})


async def test_session_and_last_event_id_headers_are_ignored() -> None:
    headers = headers_for(
        "tools/list", **{"mcp-session-id": "abc", "last-event-id": "7"}
    )
    async with serving(make_server()) as url, httpx.AsyncClient() as client:
        response = await post(client, url, "tools/list", headers=headers)

    assert response.status_code == 200
    assert "mcp-session-id" not in response.headers
    checked(response, "tools/list")


# -- Host and Origin (DNS rebinding) --------------------------------------------------
@pytest.mark.parametrize(
    "host", ["localhost:9", "127.0.0.1:1234", "[::1]:80", "LOCALHOST"]
)
async def test_loopback_host_names_are_accepted_with_any_port(host: str) -> None:
    async with serving(make_server()) as url, httpx.AsyncClient() as client:
        response = await post(client, url, "tools/list", host=host)

    assert response.status_code == 200


async def test_foreign_host_is_rejected_on_a_loopback_server() -> None:
    """Conformance dns-rebinding-protection: a non-localhost Host gets 4xx."""
    async with serving(make_server()) as url, httpx.AsyncClient() as client:
        response = await post(client, url, "tools/list", host="evil.example.com")

    assert response.status_code == 421
    check_message(response.json(), None)


async def test_allowed_hosts_extend_the_loopback_names() -> None:
    async with (
        serving(make_server(), allowed_hosts=["mcp.internal"]) as url,
        httpx.AsyncClient() as client,
    ):
        response = await post(client, url, "tools/list", host="mcp.internal:8443")

    assert response.status_code == 200


async def test_foreign_origin_is_403() -> None:
    """Spec: an Origin that is present and not allowed MUST get 403."""
    headers = headers_for("tools/list", origin="http://evil.example.com")
    async with serving(make_server()) as url, httpx.AsyncClient() as client:
        response = await post(client, url, "tools/list", headers=headers)

    assert response.status_code == 403
    message = response.json()
    check_message(message, None)
    assert "id" not in message


async def test_loopback_and_allowed_origins_pass() -> None:
    async with (
        serving(make_server(), allowed_origins=["https://app.example"]) as url,
        httpx.AsyncClient() as client,
    ):
        statuses = [
            (await post(client, url, "tools/list", origin=origin)).status_code
            for origin in (
                "http://127.0.0.1:3000",
                "http://localhost",
                "https://app.example",
            )
        ]

    assert statuses == [200, 200, 200]


# -- binding and startup --------------------------------------------------------------
@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.1", "example.com", "::"])
async def test_binding_beyond_loopback_without_auth_is_refused(host: str) -> None:
    """Our rule (api.md): checked before anything is bound."""
    with pytest.raises(McpError.InsecureBinding):
        await make_server().serve_http(host=host, port=0)


async def test_the_binding_refusal_says_what_to_do() -> None:
    """The message names the transport, the host and each way out, word for word."""
    with pytest.raises(McpError.InsecureBinding) as caught:
        await make_server().serve_http(host="0.0.0.0", port=0)

    assert (
        "refusing to serve HTTP on '0.0.0.0' without authentication: bind to "
        "127.0.0.1, or pass auth=BearerAuth(...), or require_auth=True behind an "
        "authenticating layer"
    ) == str(caught.value)


async def test_other_loopback_addresses_may_be_bound_without_auth() -> None:
    async with serving(make_server(), host="127.0.0.2") as url:
        assert url.startswith("http://127.0.0.1:")


async def test_a_port_in_use_is_a_transport_error() -> None:
    server = make_server()
    async with serving(server) as url:
        port = port_of(url)
        with pytest.raises(McpError.Transport) as raised:
            await server.serve_http(port=port)

    message = str(raised.value)
    assert f"cannot serve HTTP on 127.0.0.1:{port}: address already in use" in message
    assert "choose another port" in message


async def test_missing_hypercorn_names_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in [m for m in sys.modules if m.startswith("hypercorn")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "hypercorn", None)

    with pytest.raises(
        McpError.Transport, match=r'pip install "\.\[http\]" in the clone'
    ):
        await make_server().serve_http(port=0)


# -- auth and principals --------------------------------------------------------------
async def test_require_auth_without_principal_is_401() -> None:
    async with (
        serving(make_server(), require_auth=True) as url,
        httpx.AsyncClient() as client,
    ):
        response = await post(client, url, "tools/list")

    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    check_message(response.json(), None)


async def test_principal_callable_receives_the_scope_and_reaches_the_tool() -> None:
    def principal(scope: Any) -> str | None:
        for name, value in scope["headers"]:
            if name == b"authorization":
                return str(value.decode()).removeprefix("Bearer ")
        return None

    async with (
        serving(make_server(), require_auth=True, principal=principal) as url,
        httpx.AsyncClient() as client,
    ):
        response = await call_tool(
            client, url, "who_am_i", authorization="Bearer alice"
        )

    assert checked(response, "tools/call")["result"]["structuredContent"] == "alice"


async def test_allow_callable_grants_per_principal() -> None:
    def grants(principal: object | None) -> list[Capability]:
        return [write] if principal == "admin" else []

    results = []
    for who in ("admin", "guest"):
        async with (
            serving(
                make_server(), allow=grants, principal=lambda scope, who=who: who
            ) as url,
            httpx.AsyncClient() as client,
        ):
            response = await post(
                client, url, "tools/call", {"name": "guarded"}, name="guarded"
            )
        results.append(checked(response, "tools/call")["result"]["isError"])

    assert results == [False, True]


async def test_scope_user_and_auth_become_the_principal() -> None:
    """api.md: the principal is scope["user"] when authenticated, else scope["auth"]."""
    server = make_server()
    inner = server.mount()

    def with_scope(key: str, value: object) -> Callable[..., Any]:
        async def app(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] == "http":
                scope = {**scope, key: value}
            await inner(scope, receive, send)

        return app

    class User:
        is_authenticated = True
        identity = "user-7"

    class Anonymous:
        is_authenticated = False

    seen = []
    for key, value in (
        ("user", User()),
        ("auth", {"sub": "token-9"}),
        ("user", Anonymous()),
    ):
        async with (
            serving_app(with_scope(key, value)) as url,
            httpx.AsyncClient() as client,
        ):
            response = await post(
                client, url, "tools/call", {"name": "who_am_i"}, name="who_am_i"
            )
        seen.append(checked(response, "tools/call")["result"]["structuredContent"])

    assert seen == ["user-7", "token-9", "None"]


# -- SSE, concurrency, disconnects ----------------------------------------------------
async def test_progress_turns_the_reply_into_an_event_stream() -> None:
    """Spec: notifications related to the request, then the response, on one SSE stream."""
    params = {
        "name": "steps",
        "arguments": {"count": 3},
        "_meta": {**META, "progressToken": "tok"},
    }
    async with serving(make_server()) as url, httpx.AsyncClient() as client:
        response = await post(client, url, "tools/call", params, name="steps")

    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    assert response.headers["x-accel-buffering"] == "no"
    assert response.headers["cache-control"] == "no-cache"
    messages = sse_messages(response.content, "tools/call")
    assert [m["params"]["progress"] for m in messages[:-1]] == [1, 2, 3]
    assert {"tok"} == {m["params"]["progressToken"] for m in messages[:-1]}
    assert messages[-1]["result"]["structuredContent"] == "3 steps"


async def test_without_a_progress_token_the_reply_is_plain_json() -> None:
    async with serving(make_server()) as url, httpx.AsyncClient() as client:
        response = await call_tool(client, url, "steps")

    checked(response, "tools/call")


async def test_many_concurrent_event_streams_each_get_their_reply() -> None:
    """Conformance server-sse-multiple-streams: every POST is independent."""
    results: dict[int, list[dict[str, Any]]] = {}

    async def one(client: httpx.AsyncClient, url: str, i: int) -> None:
        params = {
            "name": "steps",
            "arguments": {"count": 2},
            "_meta": {**META, "progressToken": i},
        }
        body = request_body("tools/call", params, request_id=i)
        with trio.fail_after(10):
            response = await client.post(
                url + "/mcp", json=body, headers=headers_for("tools/call", "steps")
            )
        results[i] = sse_messages(response.content, "tools/call")

    async with (
        serving(make_server(), limits=Limits(max_concurrent=4)) as url,
        httpx.AsyncClient() as client,
        trio.open_nursery() as nursery,
    ):
        for i in range(12):
            nursery.start_soon(one, client, url, i)

    assert set(range(12)) == set(results)
    assert all(msgs[-1]["id"] == i and len(msgs) == 3 for i, msgs in results.items())


async def test_requests_beyond_max_concurrent_wait_instead_of_failing() -> None:
    gate = trio.Event()
    started = trio.Event()
    order: list[str] = []

    @tool
    async def slow() -> str:
        """Hold the only slot until the gate opens."""
        started.set()
        await gate.wait()
        order.append("slow")
        return "slow"

    @tool
    def fast() -> str:
        """Finish at once."""
        order.append("fast")
        return "fast"

    def waiting(app: McpAsgiApp) -> bool:
        limiter = app.gate._limiter
        return limiter is not None and limiter.statistics().tasks_waiting >= 1

    server = Server("limits", "1", tools=[slow, fast])
    app = server.mount(limits=Limits(max_concurrent=1))
    assert isinstance(app, McpAsgiApp)  # a modern-only server's app
    responses: dict[str, httpx.Response] = {}

    async def call(client: httpx.AsyncClient, url: str, name: str) -> None:
        responses[name] = await call_tool(client, url, name)

    async with (
        serving_app(app) as url,
        httpx.AsyncClient() as client,
        trio.open_nursery() as nursery,
    ):
        nursery.start_soon(call, client, url, "slow")
        with trio.fail_after(10):
            await started.wait()
        nursery.start_soon(call, client, url, "fast")
        with trio.fail_after(10):
            while not waiting(app):  # noqa: ASYNC110 - the limiter has no such event
                await trio.sleep(0.01)
        gate.set()

    assert order == ["slow", "fast"]
    assert [responses["slow"].status_code, responses["fast"].status_code] == [200, 200]


async def test_client_disconnect_cancels_the_handler() -> None:
    """Spec: closing the response stream means cancel; nothing more is sent."""
    forever = Forever()
    receipts: list[Receipt] = []
    delivered = trio.Event()

    def sink(receipt: Receipt) -> None:
        receipts.append(receipt)
        delivered.set()

    server = Server("cancel", "1", tools=[forever.tool], receipts=sink)
    async with serving(server) as url:
        port = port_of(url)
        body = json.dumps(request_body("tools/call", {"name": "forever"})).encode()
        head = "".join(
            f"{k}: {v}\r\n" for k, v in headers_for("tools/call", "forever").items()
        )
        raw = (
            f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\n{head}"
            f"content-length: {len(body)}\r\n\r\n"
        ).encode() + body
        with trio.fail_after(10):
            stream = await trio.open_tcp_stream("127.0.0.1", port)
            await stream.send_all(raw)
            await forever.started.wait()
            await stream.aclose()
            await forever.ended.wait()
            await delivered.wait()

    assert receipts[0].outcome == "cancelled"


# -- inside a Starlette application ----------------------------------------------------
async def test_mounted_inside_starlette_next_to_other_routes() -> None:
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.middleware.authentication import AuthenticationMiddleware
    from starlette.requests import Request
    from starlette.responses import PlainTextResponse
    from starlette.routing import Mount, Route
    from support.host_auth import HeaderUser

    async def hello(request: Request) -> PlainTextResponse:
        return PlainTextResponse("hello")

    def principal(scope: Any) -> str | None:
        user = scope.get("user")
        return user.username if user is not None and user.is_authenticated else None

    mcp_app = make_server().mount(require_auth=True, principal=principal)
    app = Starlette(
        routes=[Route("/hello", hello), Mount("/api", app=mcp_app)],
        middleware=[Middleware(AuthenticationMiddleware, backend=HeaderUser())],
    )
    async with serving_app(app) as url, httpx.AsyncClient() as client:
        with trio.fail_after(10):
            hello_response = await client.get(url + "/hello")
            health = await client.get(url + "/api/healthz")
            anonymous = await client.post(
                url + "/api/mcp",
                json=request_body("tools/list"),
                headers=headers_for("tools/list"),
            )
            called = await client.post(
                url + "/api/mcp",
                json=request_body("tools/call", {"name": "who_am_i"}),
                headers=headers_for("tools/call", "who_am_i", **{"x-user": "bob"}),
            )

    assert (
        hello_response.text,
        health.status_code,
        anonymous.status_code,
    ) == ("hello", 200, 401)
    assert checked(called, "tools/call")["result"]["structuredContent"] == "bob"


async def test_an_apps_close_does_not_fire_the_cancel_of_calls_it_still_serves() -> (
    None
):
    """Only a stream's close fires ``ctx.cancel`` (api.md): ``close()`` of an HTTP app
    ends listen streams, and the requests it goes on serving are not cancelled."""

    @tool
    def was_cancelled() -> bool:
        """Whether this call's ctx.cancel has fired."""
        return ToolContext.current().cancel.cancelled

    app = Server("c", "1", tools=[was_cancelled]).mount()
    async with serving_app(app) as url, httpx.AsyncClient() as client:
        app.close()
        response = await post(
            client, url, "tools/call", {"name": "was_cancelled"}, name="was_cancelled"
        )

    assert checked(response, "tools/call")["result"]["structuredContent"] is False

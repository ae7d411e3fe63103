"""HTTP listen streams are bounded like calls (issue 34), on a real Hypercorn.

The audit's finding: ``Limits.max_listens`` applied to stdio and WebSocket only, so
300 listen POSTs from one client were all acknowledged until Hypercorn ran out of
descriptors and calls on new connections timed out. Now at most ``max_listens``
are open per principal (per client address when anonymous) and
``max_listens_total`` per app; one past either is 503, ``Retry-After`` and -32000
at once, and calls keep being served.
"""

from __future__ import annotations

import resource
import socket
import subprocess
import sys
from contextlib import AsyncExitStack
from typing import Any

import httpx
import trio
from hypothesis import example, given
from hypothesis import strategies as st
from support import port_of, serving, subprocess_env
from support.host_auth import user_from_header
from support.mcp_http import checked, headers_for, post, request_body
from support.sse import SseStream, listening
from support.tools import echo

from trio_mcp import Limits, Server
from trio_mcp._http._listens import ListenBounds, descriptor_budget

LISTEN = "subscriptions/listen"


async def refused_listen(
    client: httpx.AsyncClient, url: str, **headers: str
) -> httpx.Response:
    """A listen POST that is expected to be answered at once (not a stream)."""
    with trio.fail_after(10):
        return await client.post(
            url + "/mcp",
            json=request_body(LISTEN, {"notifications": {}}, request_id="over"),
            headers={**headers_for(LISTEN), **headers},
        )


def assert_busy(response: httpx.Response) -> None:
    assert 503 == response.status_code
    assert "1" == response.headers["retry-after"]
    message = checked(response, LISTEN)
    assert "over" == message["id"]
    assert -32000 == message["error"]["code"]
    assert message["error"]["message"].startswith("server busy: ")
    assert message["error"]["data"] == {"retryable": True}


async def open_listens(
    stack: AsyncExitStack, url: str, count: int, **headers: str
) -> list[SseStream]:
    streams = []
    for n in range(count):
        stream = await stack.enter_async_context(
            listening(url + "/mcp", f"l{n}", headers=headers)
        )
        ack = await stream.next_message()
        assert "notifications/subscriptions/acknowledged" == ack["method"]
        streams.append(stream)
    return streams


async def call_echo(client: httpx.AsyncClient, url: str, **headers: str) -> int:
    response = await post(
        client,
        url,
        "tools/call",
        {"name": "echo", "arguments": {"text": "still served"}},
        headers={**headers_for("tools/call", "echo"), **headers},
    )
    return response.status_code


async def test_one_listen_past_a_callers_bound_is_503_and_calls_go_on() -> None:
    server = Server("bounded", "1", tools=[echo])
    limits = Limits(max_listens=2, max_listens_total=3)
    async with (
        serving(server, limits=limits, principal=user_from_header) as url,
        httpx.AsyncClient() as client,
        AsyncExitStack() as stack,
    ):
        await open_listens(stack, url, 2, **{"x-user": "alice"})
        assert_busy(await refused_listen(client, url, **{"x-user": "alice"}))
        assert 200 == await call_echo(client, url, **{"x-user": "alice"})
        # Another principal has its own bound, until the app's total is reached.
        await open_listens(stack, url, 1, **{"x-user": "bob"})
        assert_busy(await refused_listen(client, url, **{"x-user": "carol"}))
        assert 200 == await call_echo(client, url, **{"x-user": "carol"})
        discover = await post(client, url, "server/discover")
        assert 200 == discover.status_code


async def test_anonymous_callers_are_bounded_by_address() -> None:
    server = Server("bounded", "1", tools=[echo])
    async with (
        serving(server, limits=Limits(max_listens=3)) as url,
        httpx.AsyncClient() as client,
        AsyncExitStack() as stack,
    ):
        await open_listens(stack, url, 3)
        assert_busy(await refused_listen(client, url))
        assert 200 == await call_echo(client, url)


async def test_a_stream_that_ends_gives_its_place_back() -> None:
    """Closed by the client, or refused by its own checks: counted out either way."""
    server = Server("bounded", "1", tools=[echo])
    async with (
        serving(server, limits=Limits(max_listens=1)) as url,
        httpx.AsyncClient() as client,
    ):
        for _ in range(3):
            bad = await post(
                client, url, LISTEN, {"notifications": {"toolsListChanged": 5}}
            )
            assert -32602 == checked(bad, LISTEN)["error"]["code"]
        async with listening(url + "/mcp", "first") as stream:
            await stream.next_message()
        # The server notices the closed socket asynchronously: poll, bounded.
        with trio.fail_after(10):
            while True:
                async with client.stream(
                    "POST",
                    url + "/mcp",
                    json=request_body(LISTEN, {"notifications": {}}),
                    headers=headers_for(LISTEN),
                ) as response:
                    if response.status_code == 200:
                        break
                    assert 503 == response.status_code
                await trio.sleep(0.01)


Op = tuple[str, int]


@given(
    ops=st.lists(
        st.tuples(st.sampled_from(["open", "close"]), st.integers(0, 3)), max_size=60
    ),
    per_caller=st.integers(1, 4),
    total=st.integers(1, 6),
)
def test_the_bounds_hold_for_any_order_of_opens_and_closes(
    ops: list[Op], per_caller: int, total: int
) -> None:
    bounds = ListenBounds(Limits(max_listens=per_caller, max_listens_total=total))
    open_: dict[int, list[Any]] = {k: [] for k in range(4)}
    for op, who in ops:
        key = f"caller-{who}"
        if op == "open":
            refusal = bounds.refusal(key)
            mine = len(open_[who])
            everyone = sum(map(len, open_.values()))
            assert (refusal is None) == (mine < per_caller and everyone < total)
            if refusal is None:
                held = bounds.held(key)
                held.__enter__()
                open_[who].append(held)
        elif open_[who]:
            open_[who].pop().__exit__(None, None, None)
        assert bounds.total == sum(map(len, open_.values())) <= total
        assert all(
            bounds.by_caller.get(f"caller-{k}", 0) == len(v) for k, v in open_.items()
        )
    for held in [h for v in open_.values() for h in v]:
        held.__exit__(None, None, None)
    assert 0 == bounds.total
    assert {} == bounds.by_caller


def test_the_total_keeps_to_half_the_descriptor_limit() -> None:
    bounds = ListenBounds(Limits(max_listens_total=1024), budget=3)
    held = [bounds.held(f"c{n}") for n in range(3)]
    for n, one in enumerate(held):
        assert bounds.refusal(f"c{n}") is None
        one.__enter__()

    assert "3 listen streams are open" in (bounds.refusal("c9") or "")


@example(soft=0)
@example(soft=1)
@example(soft=3)
@given(soft=st.integers(0, 4096))
def test_the_budget_is_half_the_soft_descriptor_limit(soft: int) -> None:
    """Half of any soft ``RLIMIT_NOFILE`` (at least one stream); none for 0.

    The limit is this process's, lowered for the one call and put back at once
    (lowering the soft limit below the hard one needs no privilege).
    """
    kept = resource.getrlimit(resource.RLIMIT_NOFILE)
    if kept[1] != resource.RLIM_INFINITY:
        soft = min(soft, kept[1])
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, kept[1]))
    try:
        budget = descriptor_budget()
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, kept)

    if soft == 0:
        assert budget is None
    else:
        assert max(1, soft // 2) == budget
        assert isinstance(budget, int)


SERVE = """
import resource, sys, trio
from support.tools import echo
from trio_mcp import Server
resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
trio.run(lambda: Server("fds", "1", tools=[echo]).serve_http(port=int(sys.argv[1])))
"""


async def test_the_audits_flood_within_a_small_descriptor_limit() -> None:
    """The audit's reproducer, scaled to ``RLIMIT_NOFILE`` 64: one client opens 60
    listens. Half the descriptors (32) may hold streams; the rest are refused at
    once with 503, and a call on a new connection is still served."""
    port = port_of(f"http://127.0.0.1:{free_port()}")
    process = await trio.lowlevel.open_process(
        [sys.executable, "-c", SERVE, str(port)],
        env=subprocess_env(),
        stderr=subprocess.DEVNULL,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        await until_served(url)
        statuses: list[int] = []
        async with AsyncExitStack() as stack, httpx.AsyncClient() as client:
            for n in range(60):
                try:
                    stream = await stack.enter_async_context(
                        listening(url + "/mcp", f"l{n}")
                    )
                except AssertionError:
                    busy = await refused_listen(client, url)
                    statuses.append(busy.status_code)
                    continue
                await stream.next_message()
                statuses.append(200)
            call = await call_echo(client, url)
    finally:
        process.kill()
        await process.wait()

    assert 32 == statuses.count(200)
    assert {200, 503} == set(statuses)
    assert 200 == call


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


async def until_served(url: str) -> None:
    async with httpx.AsyncClient() as client:
        with trio.fail_after(30):
            while True:
                try:
                    await client.get(url + "/healthz")
                except httpx.TransportError:
                    await trio.sleep(0.05)
                else:
                    return

"""``RateLimit``: a token bucket per caller over real HTTP (issue 26).

The principal comes from an ``x-user`` header through ``principal=``, so two
callers share one loopback address and still get separate buckets; anonymous
callers are told apart by address, through ``X-Forwarded-For`` only from a proxy
the server trusts (tests/http/test_forwarded.py has the rest of the address rules).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
import pytest
import trio
from hypothesis import given
from hypothesis import strategies as st
from support import META, VERSION, serving
from support.host_auth import user_from_header

from trio_mcp import RateLimit, Receipt, Server, tool
from trio_mcp._rate_limit import take
from trio_mcp.testing import check_message


@tool
def ping() -> str:
    """Answer at once."""
    return "pong"


async def call(
    client: httpx.AsyncClient, url: str, method: str = "tools/call", **headers: str
) -> httpx.Response:
    params: dict[str, Any] = {"_meta": META}
    fields = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": VERSION,
        "mcp-method": method,
        **{k.replace("_", "-"): v for k, v in headers.items()},
    }
    if method == "tools/call":
        params["name"] = "ping"
        fields["mcp-name"] = "ping"
    body = {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}
    with trio.fail_after(10):
        return await client.post(url + "/mcp", json=body, headers=fields)


async def test_a_principal_beyond_its_limit_gets_429_and_others_do_not() -> None:
    receipts: list[Receipt] = []
    server = Server("limited", "1", tools=[ping], receipts=receipts.append)
    limit = RateLimit(2, timedelta(minutes=1))

    async with (
        serving(server, rate_limit=limit, principal=user_from_header) as url,
        httpx.AsyncClient() as client,
    ):
        alice = [(await call(client, url, x_user="alice")) for _ in range(3)]
        bob = await call(client, url, x_user="bob")
        alice_discovers = await call(client, url, "server/discover", x_user="alice")

    assert [200, 200, 429] == [r.status_code for r in alice]
    limited = alice[2]
    assert 1 <= int(limited.headers["retry-after"]) <= 30
    message = limited.json()
    check_message(message, "tools/call")
    assert 7 == message["id"]
    assert -32000 == message["error"]["code"]
    assert message["error"]["message"].startswith(
        "rate limited: this caller has used its calls for now; retry after "
    )
    assert message["error"]["data"]["retryable"] is True
    assert [200, 200] == [bob.status_code, alice_discovers.status_code]
    refused = [r for r in receipts if r.outcome == "refused"]
    assert 1 == len(refused)
    assert ("tool", "ping", "alice") == (
        refused[0].kind,
        refused[0].name,
        refused[0].principal_id,
    )
    assert "trio_mcp.RateLimit" == refused[0].error_type
    assert ["ok", "ok", "refused", "ok"] == [r.outcome for r in receipts]


async def test_forwarded_for_counts_only_from_a_trusted_proxy() -> None:
    trusting = RateLimit(1, 60, trusted_proxies=["127.0.0.0/8"])
    distrusting = RateLimit(1, 60)
    statuses: dict[str, list[int]] = {}

    for name, limit in (("trusting", trusting), ("distrusting", distrusting)):
        server = Server("limited", "1", tools=[ping])
        async with (
            serving(server, rate_limit=limit) as url,
            httpx.AsyncClient() as client,
        ):
            statuses[name] = [
                (await call(client, url, x_forwarded_for=f"192.0.2.{n}")).status_code
                for n in (1, 2, 1)
            ] + [(await call(client, url, x_forwarded_for="2001:db8::7")).status_code]

    # Behind a trusted proxy each client address has its own bucket.
    assert [200, 200, 429, 200] == statuses["trusting"]
    # From an untrusted peer the headers are ignored: one address, one bucket.
    assert [200, 429, 429, 429] == statuses["distrusting"]


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((0, 1), {}, "RateLimit.calls must be an integer of at least 1"),
        ((1, 0), {}, "RateLimit.per must be a positive, finite number of seconds"),
        ((1, float("nan")), {}, "RateLimit.per must be a positive"),
        ((1, 1), {"burst": 0}, "RateLimit.burst must be an integer of at least 1"),
        ((1, 1), {"trusted_proxies": ["proxy"]}, "RateLimit.trusted_proxies takes"),
    ],
)
def test_a_bad_rate_limit_is_refused_with_its_field(
    args: tuple[Any, ...], kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match="^" + message.replace(".", r"\.")):
        RateLimit(*args, **kwargs)


@given(
    calls=st.integers(1, 20),
    per=st.floats(0.01, 100),
    burst=st.none() | st.integers(1, 20),
    gaps=st.lists(st.floats(0, 10), max_size=60),
)
def test_a_bucket_never_allows_more_than_its_burst_plus_what_it_earned(
    calls: int, per: float, burst: int | None, gaps: list[float]
) -> None:
    limit = RateLimit(calls, per, burst=burst)
    bucket = None
    now = 0.0
    allowed = 0
    for gap in gaps:
        now += gap
        bucket, wait = take(bucket, now, limit)
        assert wait >= 0
        if wait == 0:
            allowed += 1
        else:  # after waiting as told, the next call goes through
            assert take(bucket, now + wait + 1e-9, limit)[1] == 0
    assert allowed <= limit.capacity + now * limit.rate + 1e-6

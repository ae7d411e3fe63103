"""Client addresses behind reverse proxies (issue 34): only the header the operator
names, only from the proxies it trusts; IPv6 clients share a bucket per /64.

The audit's reproducer: with ``trusted_proxies`` and a proxy that sets only
``X-Forwarded-For`` (docs/deploy.md's nginx), a client picked its own bucket with a
``Forwarded: for=`` header: six calls against a limit of three all got 200.
"""

from __future__ import annotations

import ipaddress
from typing import Any

import httpx
import pytest
import trio
from hypothesis import example, given
from hypothesis import strategies as st
from support import serving
from support.mcp_http import headers_for, request_body

from trio_mcp import InvalidArgument, RateLimit, Server, tool
from trio_mcp._http._forwarded import ClientAddresses, address_key, caller_key


@tool
def ping() -> str:
    """Answer at once."""
    return "pong"


TRUSTED = ["10.0.0.0/8", "::1", "127.0.0.0/8"]
BY_XFF = ClientAddresses(TRUSTED)
BY_FORWARDED = ClientAddresses(TRUSTED, "forwarded")
ADDRESSES = st.ip_addresses().map(str)
PEERS = ADDRESSES | st.sampled_from(["10.1.2.3", "::1", "127.0.0.1", "::ffff:10.0.0.9"])
HEADER_TEXT = st.text(st.characters(codec="latin-1"), max_size=80)
#: Forwarding headers a client may send besides the one the operator named.
OTHER_HEADERS = ["x-real-ip", "true-client-ip", "x-client-ip", "cf-connecting-ip"]


def trusted(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return any(ip in n for n in BY_XFF.trusted_proxies)


def canonical(address: str) -> str:
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    return str(ip)


def forwarded_for(address: str, port: int | None = None) -> str:
    """An RFC 7239 ``for=`` pair: IPv6 bracketed and quoted, a port when given."""
    if ":" in address:
        node = f'"[{address}]:{port or 443}"'
    else:
        node = address if port is None else f'"{address}:{port}"'
    return f"for={node};proto=https"


#: What a proxy puts between two hops: a comma, with or without spaces.
COMMAS = st.sampled_from([",", ", ", " ,", " , "])


@given(
    peer=PEERS,
    chain=st.lists(PEERS, max_size=5),
    junk=HEADER_TEXT,
    ports=st.lists(st.none() | st.integers(1, 65535), min_size=5, max_size=5),
    comma=COMMAS,
)
def test_the_named_header_alone_names_the_client_and_only_from_a_trusted_peer(
    peer: str, chain: list[str], junk: str, ports: list[int | None], comma: str
) -> None:
    # The chain is drawn from the proxies too, so hops past trusted ones are walked.
    xff = {"x-forwarded-for": comma.join(chain)}
    rfc7239 = {"forwarded": comma.join(map(forwarded_for, chain, ports))}
    others = dict.fromkeys(OTHER_HEADERS, junk)

    found = BY_XFF.client(peer, {**xff, **others, "forwarded": junk})
    found_7239 = BY_FORWARDED.client(
        peer, {**rfc7239, **others, "x-forwarded-for": junk}
    )

    if not trusted(peer):
        expected = peer
    else:
        untrusted = [a for a in chain if not trusted(a)]
        # The nearest hop that is not a trusted proxy; all trusted: the first hop.
        hops = untrusted[-1:] or chain[:1]
        expected = canonical(hops[0]) if hops else peer
    assert expected == found == found_7239
    # The header the operator did not name changes nothing.
    assert found == BY_XFF.client(peer, xff)
    assert found_7239 == BY_FORWARDED.client(peer, rfc7239)


@given(
    peer=PEERS,
    values=st.dictionaries(
        st.sampled_from(["x-forwarded-for", "forwarded", *OTHER_HEADERS]), HEADER_TEXT
    ),
)
def test_whatever_the_headers_say_the_client_is_the_peer_or_an_address(
    peer: str, values: dict[str, str]
) -> None:
    for addresses in (BY_XFF, BY_FORWARDED, ClientAddresses()):
        found = addresses.client(peer, values)
        assert found is not None
        if found != peer:
            assert trusted(peer)
            ipaddress.ip_address(found)  # an address, never a client's junk


def test_a_client_prepending_junk_or_a_quote_cannot_hide_behind_the_proxy() -> None:
    # The proxy (10.0.0.2) appends the address it saw; the client's part is junk.
    assert "198.51.100.7" == BY_XFF.client(
        "10.0.0.2", {"x-forwarded-for": 'nonsense, "1.2.3.4, 198.51.100.7'}
    )
    assert "198.51.100.7" == BY_FORWARDED.client(
        "10.0.0.2", {"forwarded": 'for="1.2.3.4, for=198.51.100.7'}
    )
    # A hop the proxy wrote that is no address: the proxy stands for its client.
    assert "10.0.0.2" == BY_FORWARDED.client("10.0.0.2", {"forwarded": "for=_hidden"})
    assert "10.0.0.3" == BY_XFF.client(
        "10.0.0.2", {"x-forwarded-for": "unknown, 10.0.0.3"}
    )


@pytest.mark.parametrize(
    "junk",
    # Not an address, however close to one: a pair of its own inside quotes, a
    # letter before the address, an empty node.
    ['"a=b"', '"X203.0.113.9"', "X203.0.113.9", '""', "for"],
)
def test_a_hop_the_proxy_wrote_that_is_no_address_stops_the_walk(junk: str) -> None:
    """The client's own part (198.51.100.7) is never reached past a hop the
    trusted proxy wrote that names no address: the proxy stands for its client."""
    assert "10.0.0.2" == BY_FORWARDED.client(
        "10.0.0.2", {"forwarded": f"for=198.51.100.7, for={junk}"}
    )
    assert "10.0.0.2" == BY_XFF.client(
        "10.0.0.2", {"x-forwarded-for": f"198.51.100.7, {junk}"}
    )


@st.composite
def spellings(draw: st.DrawFn) -> str:
    """A forwarding header's name in any mix of cases."""
    name = draw(st.sampled_from(["x-forwarded-for", "forwarded"]))
    upper = draw(st.lists(st.booleans(), min_size=len(name), max_size=len(name)))
    return "".join(c.upper() if u else c for c, u in zip(name, upper, strict=True))


@given(name=spellings(), client=st.ip_addresses(v=4).map(str))
def test_the_header_is_named_in_any_case(name: str, client: str) -> None:
    """HTTP field names are case-insensitive (RFC 9110 section 5.1): ``"Forwarded"``
    names the header ASGI gives as ``forwarded``."""
    addresses = ClientAddresses(TRUSTED, name)
    value = forwarded_for(client) if name.lower() == "forwarded" else client

    assert client == addresses.client("10.0.0.2", {name.lower(): value})


def not_mapped(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    return isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is None


V6: st.SearchStrategy[Any] = st.ip_addresses(v=6).filter(not_mapped)


@given(a=V6, b=V6)
def test_ipv6_clients_share_a_bucket_per_64(
    a: ipaddress.IPv6Address, b: ipaddress.IPv6Address
) -> None:
    same_64 = int(a) >> 64 == int(b) >> 64
    assert same_64 == (address_key(str(a)) == address_key(str(b)))
    assert same_64 == (caller_key(None, str(a)) == caller_key(None, str(b)))


@given(v4=st.ip_addresses(v=4))
def test_an_ipv4_mapped_address_is_its_ipv4_address(v4: ipaddress.IPv4Address) -> None:
    assert address_key(f"::ffff:{v4}") == address_key(str(v4)) == str(v4)


def test_a_principal_is_its_own_bucket_wherever_it_calls_from() -> None:
    assert caller_key("alice", "192.0.2.1") == caller_key("alice", "2001:db8::1")
    assert caller_key("alice", None) != caller_key("bob", None)
    assert caller_key(None, "alice") != caller_key("alice", None)


#: Principal ids as a token's ``sub`` may carry them: JSON text, lone surrogates too.
PRINCIPALS = st.text(
    st.characters(exclude_categories=()) | st.characters(categories=["Cs"]),
    max_size=8,
)


@example(a="\ud800", b="\udfff")
@given(a=PRINCIPALS, b=PRINCIPALS)
def test_any_two_principals_have_their_own_buckets(a: str, b: str) -> None:
    """Whatever the id (a JWT's ``sub`` may hold a lone surrogate), it has a key,
    the same each time, of its own."""
    assert caller_key(a, "192.0.2.1") == caller_key(a, None)
    assert (a == b) == (caller_key(a, None) == caller_key(b, None))


@pytest.mark.parametrize(
    ("options", "says"),
    [
        (
            {"forwarded_header": "x-real-ip"},
            "forwarded_header must be 'x-forwarded-for' or 'forwarded', not 'x-real-ip'",
        ),
        (
            {"forwarded_header": 5},
            "forwarded_header must be 'x-forwarded-for' or 'forwarded', not 5",
        ),
        (
            {"trusted_proxies": ["proxy.internal"]},
            "trusted_proxies takes IP addresses or networks: 'proxy.internal' ",
        ),
        (
            {"trusted_proxies": "10.0.0.0/33"},
            "trusted_proxies takes IP addresses or networks: '10.0.0.0/33' ",
        ),
    ],
)
def test_a_bad_option_is_refused_when_the_app_is_made(
    options: dict[str, Any], says: str
) -> None:
    """The message names the option, what it takes and what it was given."""
    server = Server("limited", "1", tools=[ping])
    with pytest.raises(InvalidArgument) as refused:
        server.mount(**options)

    assert str(refused.value).startswith(says)


async def calls(url: str, extra: list[dict[str, str]]) -> list[int]:
    """One ``tools/call`` of ``ping`` per item of ``extra`` (its added headers)."""
    body = request_body("tools/call", {"name": "ping"})
    statuses = []
    async with httpx.AsyncClient() as client:
        for headers in extra:
            with trio.fail_after(10):
                response = await client.post(
                    url + "/mcp",
                    json=body,
                    headers={**headers_for("tools/call", "ping"), **headers},
                )
            statuses.append(response.status_code)
    return statuses


SIX = [f"192.0.2.{n}" for n in range(1, 7)]


async def test_a_forwarded_header_nobody_named_picks_no_bucket() -> None:
    """The audit's reproducer: the proxy sets X-Forwarded-For (the default), the
    client adds ``Forwarded: for=``; all six calls share the proxy's one bucket."""
    server = Server("limited", "1", tools=[ping])
    limit = RateLimit(3, 60, trusted_proxies=["127.0.0.0/8"])
    async with serving(server, rate_limit=limit) as url:
        statuses = await calls(url, [{"forwarded": f"for={a}"} for a in SIX])
    assert [200, 200, 200, 429, 429, 429] == statuses


async def test_the_named_header_is_read_and_the_other_is_not() -> None:
    server = Server("limited", "1", tools=[ping])
    limit = RateLimit(1, 60)
    async with serving(
        server,
        rate_limit=limit,
        trusted_proxies=["127.0.0.1"],
        forwarded_header="forwarded",
    ) as url:
        by_forwarded = await calls(url, [{"forwarded": f"for={a}"} for a in SIX[:3]])
        by_xff = await calls(url, [{"x-forwarded-for": a} for a in SIX[3:]])
    # Each client its bucket by Forwarded; X-Forwarded-For is ignored: the
    # proxy's own bucket, fresh for the first, then spent.
    assert [200, 200, 200] == by_forwarded
    assert [200, 429, 429] == by_xff


async def test_the_older_spelling_on_rate_limit_still_trusts_the_proxy() -> None:
    server = Server("limited", "1", tools=[ping])
    limit = RateLimit(1, 60, trusted_proxies=["127.0.0.0/8"])
    async with serving(server, rate_limit=limit) as url:
        statuses = await calls(url, [{"x-forwarded-for": a} for a in SIX[:3]])
    assert [200, 200, 200] == statuses


async def test_ipv6_clients_of_one_64_share_a_bucket_over_http() -> None:
    server = Server("limited", "1", tools=[ping])
    async with serving(
        server, rate_limit=RateLimit(1, 60), trusted_proxies=["127.0.0.1"]
    ) as url:
        statuses = await calls(
            url,
            [
                {"x-forwarded-for": "2001:db8:0:1::1"},
                {"x-forwarded-for": "2001:db8:0:1:ffff::2"},  # the same /64
                {"x-forwarded-for": "2001:db8:0:2::1"},  # the next /64
            ],
        )
    assert [200, 429, 200] == statuses

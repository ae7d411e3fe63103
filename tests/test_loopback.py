"""``trio_mcp._loopback``: which addresses and which ``Host``/``Origin`` names are
loopback, decided in that one module (HTTP's binding and arrival checks, the HTTP and
WebSocket origin checks, the CLI all ask it)."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from hypothesis import given
from hypothesis import strategies as st

from trio_mcp._loopback import (
    LOOPBACK_HOSTS,
    arrived_on_loopback,
    is_loopback,
    is_loopback_name,
)
from trio_mcp._transports._websocket import origin_allowed

ipv4 = st.integers(0, 2**32 - 1).map(ipaddress.IPv4Address)


@given(address=ipv4)
def test_an_ipv4_address_is_loopback_exactly_in_127_slash_8(
    address: ipaddress.IPv4Address,
) -> None:
    in_127 = address in ipaddress.ip_network("127.0.0.0/8")
    mapped = ipaddress.IPv6Address(f"::ffff:{address}")

    assert in_127 == is_loopback(str(address))
    assert in_127 == is_loopback(f"[{mapped}]")  # IPv4-mapped, as a Host writes it


@given(address=st.integers(0, 2**128 - 1).map(ipaddress.IPv6Address))
def test_an_ipv6_address_is_loopback_only_as_colon_colon_1_or_mapped_127(
    address: ipaddress.IPv6Address,
) -> None:
    mapped = address.ipv4_mapped
    expected = address == ipaddress.IPv6Address("::1") or (
        mapped is not None and mapped.is_loopback
    )

    assert expected == is_loopback(str(address))
    assert expected == is_loopback(f"[{address}]")


@given(name=st.text(max_size=20))
def test_a_name_that_is_no_address_is_loopback_only_as_localhost(name: str) -> None:
    try:
        ipaddress.ip_address(name.strip().strip("[]"))
    except ValueError:
        assert (name.strip().strip("[]").lower() == "localhost") == is_loopback(name)


def test_the_local_address_of_an_asgi_request_decides_arrival() -> None:
    assert arrived_on_loopback({"server": ("127.0.0.1", 8000)})
    assert arrived_on_loopback({"server": ("::1", 8000)})
    assert not arrived_on_loopback({"server": ("192.0.2.1", 8000)})
    assert not arrived_on_loopback({"server": None})  # a Unix socket: not known
    assert not arrived_on_loopback({})


@given(
    host=st.sampled_from(["localhost", "127.0.0.1", "::1", "127.0.0.2", "example.com"]),
    port=st.none() | st.integers(1, 65535),
    scheme=st.sampled_from(["http", "https"]),
)
def test_a_page_origin_is_loopback_by_its_name_alone(
    host: str, port: int | None, scheme: str
) -> None:
    """A browser page on a loopback name may connect from any port; ``127.0.0.2``
    is loopback as an address, but not a name a loopback server answers to."""
    netloc = f"[{host}]" if ":" in host else host
    origin = f"{scheme}://{netloc}" + (f":{port}" if port else "")
    expected = netloc in LOOPBACK_HOSTS

    assert expected == is_loopback_name(urlsplit(origin).hostname)
    assert expected == origin_allowed(origin, frozenset())

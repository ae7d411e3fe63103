"""F16 (issue 34): a mounted app that sees requests arrive beyond loopback without
``require_auth`` refuses every one of them (403 naming ``McpError.InsecureBinding``,
``require_auth`` and ``allowed_hosts``; issue 34 answered 500)
and logs it once per app, whatever address, path or method; loopback ones (and
IPv4-mapped loopback) are served; ``require_auth=True`` hands the decision to the
host's authentication.
"""

from __future__ import annotations

import ipaddress
import json
import logging

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.mcp_http import headers_for, request_body
from test_http import make_server
from test_http_access import asgi_request

ADDRESSES = (
    st.ip_addresses().map(str)
    | st.sampled_from(["127.0.0.1", "::1", "::ffff:127.0.0.2", "localhost", "0.0.0.0"])
    | st.text(max_size=12)
)
ROUTES = st.sampled_from(
    [("POST", "/mcp"), ("GET", "/healthz"), ("GET", "/mcp"), ("OPTIONS", "/mcp")]
)


def loopback(address: str | None) -> bool:
    """The rule, read independently."""
    if address is None:
        return False
    if address.strip().lower() == "localhost":
        return True
    try:
        ip = ipaddress.ip_address(address.strip().strip("[]"))
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped.is_loopback
    return ip.is_loopback


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    arrivals=st.lists(st.tuples(st.none() | ADDRESSES, ROUTES), min_size=1, max_size=8)
)
async def test_every_request_beyond_loopback_is_refused_and_logged_once_per_app(
    arrivals: list[tuple[str | None, tuple[str, str]]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = make_server().mount()
    caplog.clear()
    with caplog.at_level(logging.ERROR, logger="trio_mcp.http"):
        for address, (method, path) in arrivals:
            server = None if address is None else (address, 8000)
            body = json.dumps(request_body("server/discover")).encode()
            status, _, reply = await asgi_request(
                app,
                server,
                method=method,
                path=path,
                headers=headers_for("server/discover"),
                body=body if method == "POST" else b"",
            )
            if loopback(address):
                assert b"McpError.InsecureBinding" not in reply
            else:
                assert 403 == status
                assert b"McpError.InsecureBinding" in reply
                assert b"require_auth=True" in reply
                assert b"allowed_hosts" in reply

    logged = [r for r in caplog.records if "InsecureBinding" in r.getMessage()]
    refused = [a for a, _ in arrivals if not loopback(a)]
    assert (1 if refused else 0) == len(logged)

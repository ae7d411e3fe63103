"""The revision's ordered checks of a request ("how a server processes a request").

In the order of MCP revision 2026-07-28: removed methods, ``_meta``, (HTTP) the
version header, the version, (HTTP) routing headers, the method, the log level.
The first that fails raises ``Failure``; a request that passes all of them becomes
one frozen ``Checked`` value, which every method reads.
"""

from __future__ import annotations

import logging
from collections.abc import Container
from typing import TYPE_CHECKING

import trio

from .._context import Emit
from .._json import JsonObject
from .._protocol import _wire as wire
from .._protocol._headers import check_routing_headers, check_version_header
from .._protocol._jsonrpc import Fault, Request
from ._request import Caller, Checked, Failure

if TYPE_CHECKING:
    from ._edge import Edge

__all__ = ["check"]

log = logging.getLogger("trio_mcp")


def check(
    request: Request,
    caller: Caller,
    edge: Edge,
    emit: Emit,
    scope: trio.CancelScope | None,
    methods: Container[str],
    versions: tuple[str, ...] = wire.SUPPORTED_VERSIONS,
) -> Checked:
    """Run the ordered checks of the revision ("Request checks"); ``versions`` are
    those the server serves (with the handshake-era ones of a dual-era server).

    Raises:
        Failure: with the first failing check's error.
    """
    headers = caller.headers
    method = request.method
    if method in wire.REMOVED_METHODS:
        raise _removed(method, versions)
    params = _params(request)
    meta = _meta(params)
    version = meta[wire.META_PROTOCOL_VERSION]
    assert isinstance(version, str)
    if headers is not None:
        _fail_on(check_version_header(headers, version, request.id))
    if version not in wire.SUPPORTED_VERSIONS:
        raise Failure(
            wire.UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
            {"supported": list(wire.SUPPORTED_VERSIONS), "requested": version},
            http_status=400,
        )
    if headers is not None:
        _fail_on(check_routing_headers(headers, method, params, request.id))
    if method not in methods:
        raise Failure(
            wire.METHOD_NOT_FOUND,
            f"method '{method}' is not served here",
            http_status=404,
        )
    level = meta.get(wire.META_LOG_LEVEL)
    if level is not None and level not in wire.LOG_LEVEL_RANK:
        raise Failure.invalid(
            f"'{wire.META_LOG_LEVEL}' must be one of {', '.join(wire.LOG_LEVELS)}"
        )
    return Checked(request, params, meta, caller, edge, emit, scope, request.id, method)


def _removed(method: str, versions: tuple[str, ...]) -> Failure:
    """-32601 (HTTP 404) for a method this revision removed, naming what is served.

    ``initialize`` at a modern-only server is a handshake-era client, which cannot
    send ``server/discover``: the message tells whoever reads it (the client's user,
    who passes it on) that the server's operator opts in with ``legacy=True``, and
    the operator's log says so too, once per process (``_handshake_client``).
    """
    served = ", ".join(versions)
    if method == "initialize" and versions == wire.SUPPORTED_VERSIONS:
        _handshake_client()
        advice = (
            f"this server serves only {served}; a client of an earlier revision "
            "opens with initialize, and its operator serves those clients too with "
            "Server(..., legacy=True) or trio-mcp run --legacy"
        )
    else:
        advice = f"this server supports only {served} (send server/discover)"
    return Failure(
        wire.METHOD_NOT_FOUND,
        f"method '{method}' does not exist in protocol revision "
        f"{wire.PROTOCOL_VERSION}; {advice}",
        {"supported": list(wire.SUPPORTED_VERSIONS)},
        http_status=404,
    )


_warned: list[bool] = []


def _handshake_client() -> None:
    """Warn the operator, once per process, that a handshake-era client came."""
    if _warned:
        return
    _warned.append(True)
    log.warning(
        "a client sent initialize: it speaks a handshake-era revision (2025-11-25 or "
        "earlier), which this server does not serve; to serve it too, build the "
        "server with Server(..., legacy=True) or run it with trio-mcp run --legacy"
    )


def _params(request: Request) -> JsonObject:
    params = request.params
    if not isinstance(params, dict):
        raise Failure.invalid(
            "params with _meta is required on every request", http_status=400
        )
    return params


def _meta(params: JsonObject) -> JsonObject:
    """The request's ``_meta``, with the keys every request must carry.

    Raises:
        Failure: -32602 (HTTP 400) naming what is missing.
    """
    meta = params.get("_meta")
    if not isinstance(meta, dict):
        raise Failure.invalid(
            "params._meta is required on every request", http_status=400
        )
    if not isinstance(meta.get(wire.META_PROTOCOL_VERSION), str):
        raise Failure.invalid(
            f"params._meta must carry '{wire.META_PROTOCOL_VERSION}'", http_status=400
        )
    if not isinstance(meta.get(wire.META_CLIENT_CAPABILITIES), dict):
        raise Failure.invalid(
            f"params._meta must carry '{wire.META_CLIENT_CAPABILITIES}' (an object)",
            http_status=400,
        )
    return meta


def _fail_on(fault: Fault | None) -> None:
    if fault is not None:
        raise Failure.of(fault)

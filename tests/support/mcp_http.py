"""JSON-RPC over Streamable HTTP as the tests send it: the body, the routing headers
(revision 2026-07-28, "Streamable HTTP headers"), one POST, one checked reply.

``url`` is always the base URL ``serving`` yields; the endpoint is ``/mcp``.
"""

from __future__ import annotations

from typing import Any

import httpx
import trio

from trio_mcp.testing import check_message

from . import META, VERSION

__all__ = [
    "WAIT",
    "call_tool",
    "checked",
    "headers_for",
    "post",
    "request_body",
    "rpc",
]

WAIT = 10.0


def headers_for(method: str, name: str | None = None, **extra: str) -> dict[str, str]:
    """The headers a client sends with ``method`` (``Mcp-Name`` when it routes)."""
    out = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": VERSION,
        "mcp-method": method,
    }
    if name is not None:
        out["mcp-name"] = name
    out.update(extra)
    return out


def request_body(
    method: str,
    params: dict[str, Any] | None = None,
    request_id: Any = 1,
    meta: dict[str, Any] = META,
) -> dict[str, Any]:
    """A JSON-RPC request whose params carry ``meta``."""
    full: dict[str, Any] = {"_meta": dict(meta)}
    full.update(params or {})
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": full}


async def post(
    client: httpx.AsyncClient,
    url: str,
    method: str,
    params: dict[str, Any] | None = None,
    *,
    name: str | None = None,
    headers: dict[str, str] | None = None,
    request_id: Any = 1,
    meta: dict[str, Any] = META,
    wait: float = WAIT,
    **extra: str,
) -> httpx.Response:
    """POST one request to ``url``/mcp with the routing headers and ``extra``;
    ``headers`` replace them all."""
    if headers is None:
        headers = headers_for(method, name, **extra)
    with trio.fail_after(wait):
        return await client.post(
            url + "/mcp",
            json=request_body(method, params, request_id, meta),
            headers=headers,
        )


async def call_tool(
    client: httpx.AsyncClient,
    url: str,
    name: str,
    arguments: dict[str, Any] | None = None,
    routed: str = "",
    **headers: str,
) -> httpx.Response:
    """POST a ``tools/call`` of ``name`` (with ``arguments`` when given) to
    ``url``/mcp, its ``Mcp-Name`` ``routed`` (``name`` by default) and ``headers``
    added to the routing headers."""
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    routing = headers_for("tools/call", routed or name, **headers)
    return await post(client, url, "tools/call", params, headers=routing)


def checked(response: httpx.Response, method: str | None) -> dict[str, Any]:
    """The response's one JSON-RPC message (application/json), validated."""
    assert response.headers["content-type"] == "application/json"
    message: dict[str, Any] = response.json()
    check_message(message, method)
    return message


async def rpc(
    client: httpx.AsyncClient,
    url: str,
    method: str,
    params: dict[str, Any] | None = None,
    **options: Any,
) -> dict[str, Any]:
    """POST one request (``options`` as ``post`` takes them); return its reply
    message, validated against the schema."""
    response = await post(client, url, method, params, **options)
    message: dict[str, Any] = response.json()
    check_message(message, method)
    return message

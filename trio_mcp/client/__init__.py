"""``trio_mcp.client``: a client of any MCP server, for programs and for proxies.

``async with Client(target) as client:`` speaks to one server: an ``http(s)://`` URL
(Streamable HTTP), a ``ws(s)://`` URL, a command (stdio) or a ``Server`` (in process),
in whichever era it speaks (2026-07-28 when it answers ``server/discover``, else a
handshake-era session). Results are values; a JSON-RPC error raises
``McpError.Remote``; a broken transport, a reply that is not JSON-RPC or one past
4 MiB raises ``McpError.Transport`` (``McpError.Timeout`` when a deadline passed).
Cancelling the scope around a call cancels it at the server.

The server core never imports this package; it needs the ``client`` extra for HTTP
(h11) and WebSocket (trio-websocket) targets.

Hooks for a proxy (stable, documented here rather than in the contract):

* ``Client.request(method, params, *, timeout=None, progress=None)`` sends any
  request and returns its result object unchanged, to be relayed as received;
* ``call_tool(..., progress=...)`` takes a per-call progress callback (relaying one
  inbound call's progress), overriding the client's;
* ``auth=`` as a callable is awaited in the task that makes the request, so a
  context variable the proxy sets around a call (the inbound principal) is visible
  to it; ``headers=`` may be changed on ``client.headers`` between calls;
* ``McpError.Timeout`` (a ``Transport``) tells a deadline from a failure.
"""

from ._client import Client
from ._values import (
    Completion,
    InputRequest,
    PromptResult,
    ReadResult,
    ServerInfo,
    ToolResult,
)

__all__ = [
    "Client",
    "Completion",
    "InputRequest",
    "PromptResult",
    "ReadResult",
    "ServerInfo",
    "ToolResult",
]

for _name in __all__:
    globals()[_name].__module__ = __name__
del _name

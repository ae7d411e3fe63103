"""``Server``: the catalog, validated up front, and the ways to serve it.

Constructing a Server checks every declaration before any message is read. The
serve methods are ordinary async functions, so they run under a caller's nursery
and stop when it is cancelled. Transports are imported only when used, so
``import trio_mcp`` never loads the web stack.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import trio

from ._authority import Grants, ReceiptSink
from ._declare import Prompt, Resource, Tool
from ._dispatch import Catalog, Dispatcher
from ._transports._stream import Oversized, Send, serve_messages
from ._units import DEFAULT_MAX_CONCURRENT, DEFAULT_MAX_DEPTH

if TYPE_CHECKING:
    from ._declare import PromptSpec, ResourceSpec, ToolSpec

__all__ = ["Server"]


class Server:
    """An MCP server for an explicit catalog of tools, resources and prompts.

    Args:
        name: The server's name, sent as ``serverInfo``.
        version: The server's version, sent as ``serverInfo``.
        tools: ``@tool`` declarations (functions or bound methods), in catalog order.
        resources: ``@resource`` declarations.
        prompts: ``@prompt`` declarations.
        instructions: Guidance for the client, returned by ``server/discover``.
        receipts: A callable (sync or async) that receives every ``Receipt``.
        state_key: Key for protecting multi round-trip ``requestState``.

    Raises:
        McpError.InvalidDeclaration: listing every problem found in the declarations.
        McpError.DuplicateName: if two declarations share a wire name.
    """

    def __init__(
        self,
        name: str,
        version: str,
        tools: Sequence[Tool[..., Any]] = (),
        resources: Sequence[Resource[..., Any]] = (),
        prompts: Sequence[Prompt[..., Any]] = (),
        *,
        instructions: str | None = None,
        receipts: ReceiptSink | None = None,
        state_key: bytes | str | Sequence[bytes | str] | None = None,
    ) -> None:
        self.name = name
        self.version = version
        self._catalog = Catalog(tools, resources, prompts)
        self.state_key = state_key
        self.dispatcher = Dispatcher(
            self._catalog,
            name=name,
            version=version,
            instructions=instructions,
            receipts=receipts,
        )

    def catalog(self) -> list[ToolSpec | ResourceSpec | PromptSpec]:
        """Return every entry's spec: tools, resources, then prompts, each in list order."""
        return self._catalog.specs()  # type: ignore[return-value]

    async def serve_messages(
        self,
        incoming: trio.abc.ReceiveChannel[str | bytes | Oversized],
        send: Send,
        *,
        allow: Grants = (),
        principal: object | None = None,
        max_depth: int = DEFAULT_MAX_DEPTH,
        max_concurrent: int = DEFAULT_MAX_CONCURRENT,
    ) -> None:
        """Serve whole JSON-RPC messages from a channel; for custom transports and tests.

        Args:
            incoming: Each item is one message's text (or bytes).
            send: Writes one outgoing message's text.
            allow: Capabilities granted to the caller, or a function of the principal.
            principal: Who is calling, if the transport knows.
            max_depth: Deepest nesting of arrays and objects accepted.
            max_concurrent: Most handlers running at once; more requests wait.
        """
        await serve_messages(
            self.dispatcher,
            incoming,
            send,
            allow=allow,
            principal=principal,
            max_depth=max_depth,
            max_concurrent=max_concurrent,
        )

"""Test a trio_mcp server in-process: ``McpTestClient`` and the pytest plugin."""

from ._client import Exchange as Exchange
from ._client import Listen as Listen
from ._client import McpTestClient as McpTestClient
from ._client import ProtocolError as ProtocolError
from ._client import ToolResult as ToolResult
from ._schema import SchemaViolation as SchemaViolation
from ._schema import check_message as check_message

__all__ = [
    "Exchange",
    "Listen",
    "McpTestClient",
    "ProtocolError",
    "SchemaViolation",
    "ToolResult",
    "check_message",
]

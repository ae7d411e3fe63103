"""Test a trio_mcp server in-process: ``McpTestClient``, ``call_for`` (a middleware
step's call, built without serving) and the pytest plugin."""

from ._call import call_for as call_for
from ._client import Exchange as Exchange
from ._client import Listen as Listen
from ._client import McpTestClient as McpTestClient
from ._client import ProtocolError as ProtocolError
from ._client import ToolResult as ToolResult
from ._results import ListedPrompt as ListedPrompt
from ._results import ListedResource as ListedResource
from ._results import ListedTool as ListedTool
from ._results import PromptResult as PromptResult
from ._results import ResourceResult as ResourceResult
from ._schema import SchemaViolation as SchemaViolation
from ._schema import check_message as check_message

__all__ = [
    "Exchange",
    "Listen",
    "ListedPrompt",
    "ListedResource",
    "ListedTool",
    "McpTestClient",
    "PromptResult",
    "ProtocolError",
    "ResourceResult",
    "SchemaViolation",
    "ToolResult",
    "call_for",
    "check_message",
]

# Shown where they are imported from: a failing test prints
# trio_mcp.testing.ProtocolError, not the private module it is defined in.
for _name in __all__:
    globals()[_name].__module__ = __name__
del _name

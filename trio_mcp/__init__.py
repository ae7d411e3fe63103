"""Model Context Protocol servers on Trio.

Write ordinary typed functions, decorate them with ``@tool``, ``@resource`` or
``@prompt``, list them in a ``Server``, and serve it over stdio or Streamable HTTP.
The public names are re-exported here; everything else is private.
"""

from contextlib import suppress as _suppress
from typing import TYPE_CHECKING as _TYPE_CHECKING

from ._authority import Capability as Capability
from ._authority import Receipt as Receipt
from ._authority._secrets import Secret as Secret
from ._changes._redis import RedisBroadcast as RedisBroadcast
from ._context import CancelToken as CancelToken
from ._context import ToolContext as ToolContext
from ._declare import Answer as Answer
from ._declare import AudioContent as AudioContent
from ._declare import BlobResourceContents as BlobResourceContents
from ._declare import Elicit as Elicit
from ._declare import ElicitResult as ElicitResult
from ._declare import ElicitUrl as ElicitUrl
from ._declare import EmbeddedResource as EmbeddedResource
from ._declare import FunctionPrompt as FunctionPrompt
from ._declare import FunctionResource as FunctionResource
from ._declare import FunctionTool as FunctionTool
from ._declare import Icon as Icon
from ._declare import ImageContent as ImageContent
from ._declare import ListRoots as ListRoots
from ._declare import NeedsInput as NeedsInput
from ._declare import Prompt as Prompt
from ._declare import PromptArgument as PromptArgument
from ._declare import PromptGet as PromptGet
from ._declare import PromptMessage as PromptMessage
from ._declare import PromptReply as PromptReply
from ._declare import PromptSpec as PromptSpec
from ._declare import Resource as Resource
from ._declare import ResourceLink as ResourceLink
from ._declare import ResourceRead as ResourceRead
from ._declare import ResourceReply as ResourceReply
from ._declare import ResourceSpec as ResourceSpec
from ._declare import Root as Root
from ._declare import Sample as Sample
from ._declare import SampleResult as SampleResult
from ._declare import ServerInfo as ServerInfo
from ._declare import TextContent as TextContent
from ._declare import TextResourceContents as TextResourceContents
from ._declare import Tool as Tool
from ._declare import ToolCall as ToolCall
from ._declare import ToolHints as ToolHints
from ._declare import ToolReply as ToolReply
from ._declare import ToolSpec as ToolSpec
from ._declare import View as View
from ._declare import prompt as prompt
from ._declare import resource as resource
from ._declare import tool as tool
from ._decode import decode as decode
from ._decode import encode as encode
from ._dispatch import Call as Call
from ._dispatch import Ending as Ending
from ._dispatch import Middleware as Middleware
from ._dispatch import Next as Next
from ._errors import AlreadyRunning as AlreadyRunning
from ._errors import DecodeError as DecodeError
from ._errors import DuplicateName as DuplicateName
from ._errors import InsecureBinding as InsecureBinding
from ._errors import InvalidArgument as InvalidArgument
from ._errors import InvalidDeclaration as InvalidDeclaration
from ._errors import InvalidReply as InvalidReply
from ._errors import McpError as McpError
from ._errors import MissingClientCapability as MissingClientCapability
from ._errors import Problem as Problem
from ._errors import Refusal as Refusal
from ._errors import ResourceNotFound as ResourceNotFound
from ._errors import StateKeyRequired as StateKeyRequired
from ._errors import ToolError as ToolError
from ._errors import Transport as Transport
from ._errors import UnsupportedType as UnsupportedType
from ._http._options import HttpOptions as HttpOptions
from ._limits import LimitFields as LimitFields
from ._limits import Limits as Limits
from ._rate_limit import RateLimit as RateLimit
from ._schema import Field as Field
from ._schema import described as described
from ._schema import json_schema as json_schema
from ._server import Server as Server
from ._server_options import ServerOptions as ServerOptions
from ._skills import Skill as Skill
from ._store import MemoryStore as MemoryStore
from ._store import RedisStore as RedisStore
from ._upstream import Upstream as Upstream
from ._version import __version__ as __version__

if _TYPE_CHECKING:
    from ._http._oauth import ProtectedResource as ProtectedResource

#: Public names whose modules load on first use: ``import trio_mcp`` loads no OAuth
#: code (``ProtectedResource`` is read only by servers that check tokens).
_LAZY = {"ProtectedResource": "trio_mcp._http._oauth"}


def __getattr__(name: str) -> object:
    """Load a public name of ``_LAZY`` from its module on first use (PEP 562)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'trio_mcp' has no attribute {name!r}")
    import importlib

    value: object = getattr(importlib.import_module(module), name)
    if isinstance(value, type):
        _resolve_own_annotations(value, _compiled)
    _as_public(value)
    globals()[name] = value
    return value


__all__ = [
    "AlreadyRunning",
    "Answer",
    "AudioContent",
    "BlobResourceContents",
    "Call",
    "CancelToken",
    "Capability",
    "DecodeError",
    "DuplicateName",
    "Elicit",
    "ElicitResult",
    "ElicitUrl",
    "EmbeddedResource",
    "Ending",
    "Field",
    "FunctionPrompt",
    "FunctionResource",
    "FunctionTool",
    "HttpOptions",
    "Icon",
    "ImageContent",
    "InsecureBinding",
    "InvalidArgument",
    "InvalidDeclaration",
    "InvalidReply",
    "LimitFields",
    "Limits",
    "ListRoots",
    "McpError",
    "MemoryStore",
    "Middleware",
    "MissingClientCapability",
    "NeedsInput",
    "Next",
    "Problem",
    "Prompt",
    "PromptArgument",
    "PromptGet",
    "PromptMessage",
    "PromptReply",
    "PromptSpec",
    "ProtectedResource",
    "RateLimit",
    "Receipt",
    "RedisBroadcast",
    "RedisStore",
    "Refusal",
    "Resource",
    "ResourceLink",
    "ResourceNotFound",
    "ResourceRead",
    "ResourceReply",
    "ResourceSpec",
    "Root",
    "Sample",
    "SampleResult",
    "Secret",
    "Server",
    "ServerInfo",
    "ServerOptions",
    "Skill",
    "StateKeyRequired",
    "TextContent",
    "TextResourceContents",
    "Tool",
    "ToolCall",
    "ToolContext",
    "ToolError",
    "ToolHints",
    "ToolReply",
    "ToolSpec",
    "Transport",
    "UnsupportedType",
    "Upstream",
    "View",
    "__version__",
    "decode",
    "described",
    "encode",
    "json_schema",
    "prompt",
    "resource",
    "tool",
]


def _resolve_own_annotations(cls: type, compiled: dict[str, object]) -> None:
    # typing.get_type_hints (and so attrs.resolve_types and cattrs) evaluates string
    # annotations in sys.modules[cls.__module__]: resolve them where they were written
    # before __module__ becomes "trio_mcp", or Literal, Mapping, ... go missing.
    # One that cannot be evaluated even there (a string alias) is left as it was.
    # ``compiled`` keeps the code of each spelling ("str | None" recurs a lot).
    import contextlib
    import inspect
    import sys

    own = inspect.get_annotations(cls)
    if not any(isinstance(v, str) for v in own.values()):
        return
    namespace = vars(sys.modules[cls.__module__])
    scope = dict(vars(cls))
    resolved: dict[str, object] = {}
    for name, value in own.items():
        if isinstance(value, str):
            code = compiled.get(value)
            if code is None:
                code = compiled[value] = compile(value, "<annotation>", "eval")
            # NameError: a TYPE_CHECKING-only name; TypeError: "JsonValue | None",
            # where JsonValue is a recursive string alias that stays a string.
            with contextlib.suppress(NameError, TypeError):
                value = eval(code, namespace, scope)  # type: ignore[arg-type]
        resolved[name] = value
    cls.__annotations__ = resolved


def _as_public(obj: object) -> None:
    """Show a public object as ``trio_mcp.Name`` (its reprs, docs and pickles)."""
    if getattr(obj, "__module__", "").startswith("trio_mcp._"):
        # Some objects (aliases, builtins) refuse a new __module__; keep theirs.
        with _suppress(AttributeError, TypeError):
            obj.__module__ = "trio_mcp"


_compiled: dict[str, object] = {}
for _name in __all__:
    if _name in _LAZY:
        continue
    _obj = globals()[_name]
    if isinstance(_obj, type) and _obj.__module__.startswith("trio_mcp._"):
        _resolve_own_annotations(_obj, _compiled)
for _name in __all__:
    if _name not in _LAZY:
        _as_public(globals()[_name])
del _name, _obj

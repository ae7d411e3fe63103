"""Every exception trio_mcp raises to its user: one tree under ``McpError``.

Exceptions that never leave trio_mcp (how one step tells the next that a request
failed, such as ``_dispatch``'s ``Failure``) are private and not part of it.

::

    Exception
      McpError                   the root: ``except McpError`` catches anything of ours
        InvalidDeclaration       a declaration cannot become a protocol entry (at Server(...))
        DuplicateName            two declarations share a wire name (at Server(...))
        Transport                the medium failed (stdout closed, bind refused); cause in __cause__
          Timeout (TimeoutError) trio_mcp.client: a call's deadline passed (the call was cancelled)
        Remote                   trio_mcp.client: the server answered with a JSON-RPC error
        InsecureBinding          HTTP beyond loopback without require_auth=True
        InvalidReply             a reply does not fit its declaration (the request: -32603)
        DecodeError (ValueError) a JSON value does not fit a type; ``.problems`` lists every one
                                 (in a tool call: an isError result; prompts: -32602)
        ToolError                raised by a handler for the model: an isError result, redacted
        ResourceNotFound (LookupError)  raised by a reader: -32602 with data.uri
        Refusal                  ToolContext.require: a capability not declared or not granted
                                 (tools: an isError result; prompts and reads: -31403)
        MissingClientCapability  the request lacks a client capability: -32021 (HTTP 400)
        UnsupportedType (TypeError)  a type JSON Schema cannot show (at decoration, or
                                 from trio_mcp.json_schema / decode / encode)
        StateKeyRequired (ValueError)  several workers but no shared requestState key
        InvalidArgument (ValueError, TypeError)  an argument that cannot work (server.run,
                                 BearerAuth, Introspection); the message says what to give
        AlreadyRunning (RuntimeError)  server.run() inside a running Trio loop

The first five are raised to the host program; the rest are raised by handlers (or by
``trio_mcp.decode``) and become what the client sees, as noted. Every code the server sends
is listed in docs/errors.md. No I/O and no third-party imports here: every layer may import
this module.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

from ._json import JsonObject, JsonValue
from ._version import __version__

__all__ = [
    "install_hint",
    "DecodeError",
    "AlreadyRunning",
    "DuplicateName",
    "InsecureBinding",
    "InvalidArgument",
    "InvalidDeclaration",
    "InvalidReply",
    "McpError",
    "MissingClientCapability",
    "Remote",
    "Problem",
    "Refusal",
    "ResourceNotFound",
    "Timeout",
    "ToolError",
    "Transport",
]


def install_hint(extra: str) -> str:
    """How to add an extra, in the spelling that works: trio-mcp is on no public
    package index, so installing the extra by the project's name finds nothing in a fresh
    virtualenv. The wheel built in a clone, or the clone itself, has the extra."""
    wheel = f"trio_mcp-{__version__}-py3-none-any.whl"
    return (
        f'install the {extra} extra: pip install "/path/to/{wheel}[{extra}]" '
        f'(the wheel built in a clone of trio-mcp), or pip install ".[{extra}]" in '
        "the clone"
    )


class McpError(Exception):
    """Base class of the errors trio_mcp raises to the host program.

    The subclasses are reachable as attributes (``McpError.InvalidDeclaration``) and
    as module names (``trio_mcp.InvalidDeclaration``); both spellings are one class.
    """

    InvalidDeclaration: type[InvalidDeclaration]
    DuplicateName: type[DuplicateName]
    Transport: type[Transport]
    Timeout: type[Timeout]
    Remote: type[Remote]
    InsecureBinding: type[InsecureBinding]
    InvalidReply: type[InvalidReply]
    InvalidArgument: type[InvalidArgument]
    AlreadyRunning: type[AlreadyRunning]
    UnsupportedType: type[UnsupportedType]
    StateKeyRequired: type[StateKeyRequired]


class InvalidDeclaration(McpError):
    """A declaration cannot become a protocol entry.

    ``problems`` holds one line per problem found, each naming the declaration
    (``module:qualname``) and what to fix; the server gathers all of them at once.
    """

    def __init__(self, problems: str | Sequence[str]) -> None:
        self.problems: tuple[str, ...] = (
            (problems,) if isinstance(problems, str) else tuple(problems)
        )
        if len(self.problems) == 1:
            text = self.problems[0]
        else:
            text = f"{len(self.problems)} problems:\n" + "\n".join(
                f"- {p}" for p in self.problems
            )
        super().__init__(text)


class DuplicateName(McpError):
    """Two declarations of one kind share a wire name."""


class Transport(McpError):
    """The medium failed: the protocol stream closed, a port could not be bound, ...

    The underlying error is in ``__cause__``.
    """


class Timeout(Transport, TimeoutError):
    """A client call got no reply within its deadline (``timeout=``, per call or the
    client's); the call was cancelled at the server. Also a ``TimeoutError``."""


class Remote(McpError):
    """The server answered a client's request with a JSON-RPC error.

    ``code``, ``message`` and ``data`` are the error object's members, as received
    (``-32602`` for an unknown tool, ``-32601`` for a method the server lacks, ...).
    A tool's own failure is not one: it is a result with ``is_error`` set.
    """

    def __init__(
        self, code: int, message: str, data: JsonValue = None, *, method: str = ""
    ) -> None:
        self.code = code
        self.message = message
        self.data = data
        self.method = method
        where = f"{method}: " if method else ""
        super().__init__(f"{where}the server answered {code}: {message}")


class InsecureBinding(McpError):
    """HTTP was asked to listen beyond loopback without ``require_auth=True``."""


class InvalidReply(McpError):
    """A handler's return value does not fit its declared return type or output schema.

    Never raised to the caller of a serve method: the request it belongs to ends
    with -32603, its receipt says ``internal`` with this type as ``error_type``, and
    the log record says what did not fit (``problems``, one line each). Fix the
    handler or its return annotation.
    """

    def __init__(self, where: str, problems: str | Sequence[str]) -> None:
        self.problems: tuple[str, ...] = (
            (problems,) if isinstance(problems, str) else tuple(problems)
        )
        super().__init__(
            f"{where}: the reply does not fit what was declared: "
            + "; ".join(self.problems)
        )


McpError.InvalidDeclaration = InvalidDeclaration
McpError.DuplicateName = DuplicateName
McpError.Transport = Transport
McpError.Timeout = Timeout
McpError.Remote = Remote
McpError.InsecureBinding = InsecureBinding
McpError.InvalidReply = InvalidReply


class InvalidArgument(McpError, ValueError, TypeError):
    """An argument that cannot work: ``server.run("bogus")``, a ``BearerAuth`` issuer
    that is not an absolute URL, a negative leeway, ...; the message says what to give.

    Also a ValueError and a TypeError, so code that caught either keeps working.
    """


class AlreadyRunning(McpError, RuntimeError):
    """``server.run()`` was called where a Trio loop is already running; ``await``
    a serve method there instead. Also a RuntimeError (what Trio raised before)."""


class UnsupportedType(McpError, TypeError):
    """A type outside the table, or a use of it that JSON Schema cannot show.

    ``where`` is the dotted path inside the type (``""`` at the root, e.g.
    ``filters.items``); ``reason`` says what to use instead.
    """

    def __init__(self, what: str, reason: str, where: str = "") -> None:
        self.what = what
        self.reason = reason
        self.where = where
        at = f" at {where}" if where else ""
        super().__init__(f"{what} is not supported{at}: {reason}")


class StateKeyRequired(McpError, ValueError):
    """Several processes would each make their own random state key: configure one
    (``Server(state_key=...)`` or ``TRIO_MCP_STATE_KEY``)."""


McpError.InvalidArgument = InvalidArgument
McpError.AlreadyRunning = AlreadyRunning
McpError.UnsupportedType = UnsupportedType
McpError.StateKeyRequired = StateKeyRequired


class ToolError(McpError):
    """A failure the model may read and act on.

    Raise it (or a subclass listed in a declaration's ``errors=``) from a handler: the
    client receives ``isError: true`` with this message and its ``__cause__`` chain,
    with secrets masked. Any other exception becomes a generic internal error.
    """


class ResourceNotFound(McpError, LookupError):
    """Raise from a resource reader when the URI names nothing that exists.

    The client receives JSON-RPC -32602 with ``data.uri``, as the protocol requires
    for a missing resource (never an empty ``contents``).
    """


class Problem(NamedTuple):
    """One bad input: where it is (``filters.0.name``) and what is wrong with it.

    The message never contains the offending value, which may be secret. Unpacks as
    ``(path, message)``.
    """

    path: str
    message: str

    def line(self) -> str:
        """Return the ``- path: message`` line shown to the model."""
        where = self.path or "arguments"
        return f"- {where}: {self.message}"


class DecodeError(McpError, ValueError):
    """A JSON value does not fit the expected type.

    ``problems`` lists every ``Problem`` found, not only the first.
    """

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems: tuple[Problem, ...] = tuple(problems)
        super().__init__("\n".join(p.line() for p in self.problems))


class Refusal(McpError):
    """Raised by ``ToolContext.require`` when a capability is not both declared and granted.

    The dispatcher turns it into an ``isError`` result (tools) or -31403 (prompts and
    reads), and a ``refused`` receipt.
    """

    def __init__(
        self, capability: str, *, declared: bool, unseen: bool = False
    ) -> None:
        self.capability = capability
        self.declared = declared
        self.unseen = unseen
        reason = (
            "is not granted to this caller"
            if declared
            else "is not declared by this tool"
        )
        if unseen:
            reason = (
                "cannot be checked here: this code runs outside the call (a thread "
                "the handler started?) and cannot see its grants; require it in the "
                "handler, in trio.to_thread.run_sync, or in a thread run with "
                "contextvars.copy_context()"
            )
        super().__init__(f"capability '{capability}' {reason}")


class MissingClientCapability(McpError):
    """A call needs a client capability that the request's ``clientCapabilities`` lack.

    Raise it from a handler (or call ``ToolContext.require_client``); the dispatcher
    answers JSON-RPC -32021 (HTTP 400) with ``data.requiredCapabilities`` set to
    ``required``, a ClientCapabilities object such as ``{"sampling": {}}``.
    """

    def __init__(
        self, required: Mapping[str, JsonValue], message: str | None = None
    ) -> None:
        self.required: JsonObject = dict(required)
        names = ", ".join(sorted(self.required)) or "none"
        super().__init__(
            message
            or f"this request needs the client capabilities: {names}; declare them "
            "in _meta clientCapabilities"
        )

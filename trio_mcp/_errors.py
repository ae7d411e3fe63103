"""The exceptions trio_mcp raises to Python callers, and the ones authors raise to models.

Two families, never mixed::

    Exception
      McpError                 for the host developer; raised to Python, never sent as tool text
        InvalidDeclaration     a declaration cannot become a protocol entry
        DuplicateName          two declarations share a wire name
        Transport              the medium failed (stdout closed, bind refused); cause in __cause__
        InsecureBinding        HTTP bound beyond loopback without require_auth=True
        InvalidReply           a handler's return value does not fit its declaration (-32603)
      ToolError                for the model: its message and __cause__ chain are shown, redacted
      DecodeError              a JSON value does not fit a type; ``.problems`` lists every one

No I/O and no third-party imports here: every layer may import this module.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "DecodeError",
    "DuplicateName",
    "InsecureBinding",
    "InvalidDeclaration",
    "InvalidReply",
    "McpError",
    "Problem",
    "ResourceNotFound",
    "ToolError",
    "Transport",
]


class McpError(Exception):
    """Base class of the errors trio_mcp raises to the host program.

    The subclasses are reachable as attributes (``McpError.InvalidDeclaration``) and
    as module names (``trio_mcp.InvalidDeclaration``); both spellings are one class.
    """

    InvalidDeclaration: type[InvalidDeclaration]
    DuplicateName: type[DuplicateName]
    Transport: type[Transport]
    InsecureBinding: type[InsecureBinding]
    InvalidReply: type[InvalidReply]


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
McpError.InsecureBinding = InsecureBinding
McpError.InvalidReply = InvalidReply


class ToolError(Exception):
    """A failure the model may read and act on.

    Raise it (or a subclass listed in a declaration's ``errors=``) from a handler: the
    client receives ``isError: true`` with this message and its ``__cause__`` chain,
    with secrets masked. Any other exception becomes a generic internal error.
    """


class ResourceNotFound(LookupError):
    """Raise from a resource reader when the URI names nothing that exists.

    The client receives JSON-RPC -32602 with ``data.uri``, as the protocol requires
    for a missing resource (never an empty ``contents``).
    """


class Problem:
    """One bad input: where it is (``filters.0.name``) and what is wrong with it.

    The message never contains the offending value, which may be secret.
    """

    __slots__ = ("message", "path")

    def __init__(self, path: str, message: str) -> None:
        self.path = path
        self.message = message

    def __repr__(self) -> str:
        return f"Problem({self.path!r}, {self.message!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Problem):
            return NotImplemented
        return (self.path, self.message) == (other.path, other.message)

    def __hash__(self) -> int:
        return hash((self.path, self.message))

    def __iter__(self):  # type: ignore[no-untyped-def]
        """Unpack as ``(path, message)``."""
        yield self.path
        yield self.message

    def line(self) -> str:
        """Return the ``- path: message`` line shown to the model."""
        where = self.path or "arguments"
        return f"- {where}: {self.message}"


class DecodeError(ValueError):
    """A JSON value does not fit the expected type.

    ``problems`` lists every ``Problem`` found, not only the first.
    """

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems: tuple[Problem, ...] = tuple(problems)
        super().__init__("\n".join(p.line() for p in self.problems))

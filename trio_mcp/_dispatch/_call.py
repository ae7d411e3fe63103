"""The running call as a value, how it ended as a value, and the steps between.

Every ``tools/call``, ``prompts/get``, ``resources/read`` and ``completion/complete``
becomes one frozen ``Call`` (what was asked, by whom, under which context); the
runner passes it down a chain of steps (``Middleware``), each an async callable
``step(call, next) -> Ending``. The last step runs the handler. Whatever happens, a
step gets an ``Ending`` back from ``next``: a handler's failure is a value here,
never an exception. ``Dispatcher.handle`` turns the ending into the reply.

``Ending`` is also how a step answers on its own: ``Ending.refused(...)`` ends the
call with a JSON-RPC error, an HTTP status and headers (an authorization step's
403 with ``WWW-Authenticate``), and a returned ending from an earlier call can be
returned again (a cache): it holds no request id.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import ClassVar, Literal, Protocol, TypeAlias, get_args

import attrs
import trio

from .. import _checks as checks
from .._authority import Outcome
from .._context import TaskControl, ToolContext
from .._declare import (
    PromptReply,
    PromptSpec,
    ResourceReply,
    ResourceSpec,
    ToolReply,
    ToolSpec,
)
from .._json import JsonObject, JsonValue, encode_message
from .._protocol import _wire as wire
from .._protocol._wire import REFUSED
from ._request import Caller, Checked, Failure

__all__ = [
    "BUSY_RETRY_AFTER",
    "BUSY_TYPE",
    "AnyReply",
    "Call",
    "Completed",
    "Ending",
    "Middleware",
    "Next",
    "ReceiptKind",
    "busy",
    "Target",
]

CallMethod: TypeAlias = Literal[
    "tools/call", "prompts/get", "resources/read", "completion/complete"
]
ReceiptKind: TypeAlias = Literal["tool", "prompt", "resource", "completion"]


class Completed(Protocol):
    """A completer's answer, already collected (``_complete``)."""

    @property
    def needs(self) -> None: ...


AnyReply: TypeAlias = ToolReply | PromptReply | ResourceReply | Completed


class Target(Protocol):
    """What the runner needs of whatever a call runs (``_targets``)."""

    kind: ClassVar[ReceiptKind]

    @property
    def declaration(self) -> str: ...

    @property
    def required(self) -> frozenset[str]: ...

    @property
    def timeout(self) -> float | None: ...

    @property
    def upstream(self) -> str | None:
        """The upstream that answers the call (a gateway's), else None."""

    @property
    def spec(self) -> ToolSpec | PromptSpec | ResourceSpec: ...

    async def answer(self, call: Call) -> AnyReply:
        """Run the handler once; return its reply value."""

    def shaped(self, reply: AnyReply) -> Ending:
        """The ending of a reply: the protocol result, checked."""

    def failed(self, failure: Failure) -> Ending:
        """The ending of a failure."""

    def masked(self, result: JsonObject, mask: Callable[[str], str]) -> JsonObject:
        """The result with the strings its handler wrote masked."""


@attrs.frozen(eq=False, kw_only=True)
class Call:
    """One call on its way to its handler, as every step of the chain sees it.

    ``arguments`` are the request's arguments as received, except that a value the
    input schema marks ``writeOnly`` (a ``Secret[str]`` parameter) is a ``Secret``:
    a step sees secrets only as ``Secret``. For ``resources/read`` they are the URI
    template's variables; for ``completion/complete`` the argument being completed
    and the other arguments already filled in (all strings).

    ``target``, ``request`` and ``deadline`` are what the runner's own steps read
    (the handler's wrapper, the checked request with its ``_meta``, the call's
    deadline scope); a step of a server's ``middleware=`` rarely needs them.
    ``trio_mcp.testing.call_for(...)`` builds one for a step's unit test.
    """

    method: CallMethod
    """``tools/call``, ``prompts/get``, ``resources/read`` or ``completion/complete``."""
    name: str
    """The wire name: the tool or prompt name, or the resource URI read (for
    ``completion/complete``, the prompt name or the resource URI template)."""
    arguments: Mapping[str, object]
    principal: object | None
    """Who is calling, as the transport authenticated it (None on stdio)."""
    request_id: str | int
    context: ToolContext
    """The call's ``ToolContext`` (also ``ToolContext.current()`` inside the chain)."""
    spec: ToolSpec | PromptSpec | ResourceSpec
    """The spec of the declaration called."""
    target: Target = attrs.field(repr=False)
    """What the call runs: the declaration's handler, its checks and its reply."""
    request: Checked = attrs.field(repr=False)
    """The request the call answers, as the protocol checks passed it."""
    deadline: trio.CancelScope | None = attrs.field(repr=False)
    """The scope of the spec's ``timeout``, or None."""
    task: TaskControl | None = attrs.field(default=None, repr=False)
    """The tasks extension's hold on a call that may become a task, else None."""

    @property
    def required(self) -> frozenset[str]:
        """Every capability the call needs: the spec's ``caps`` and what they require."""
        return self.target.required

    @property
    def granted(self) -> frozenset[str]:
        """The capabilities the host granted this caller."""
        return self.context.granted

    @property
    def caller(self) -> Caller:
        """Who is calling, and how (the transport's view)."""
        return self.request.caller


def _headers(value: object) -> tuple[tuple[str, str], ...]:
    pairs: tuple[object, ...] = checks.as_tuple(
        value,  # type: ignore[arg-type]
        "Ending.headers",
        "(name, value) pairs of str",
    )
    for pair in pairs:
        if not (
            isinstance(pair, tuple)
            and len(pair) == 2
            and all(isinstance(p, str) for p in pair)
        ):
            raise checks.invalid("Ending.headers", "(name, value) pairs of str", pair)
    return pairs  # type: ignore[return-value]


_OUTCOMES = frozenset(get_args(Outcome))


@attrs.frozen(eq=False, kw_only=True)
class Ending:
    """How one call ended: its result, or the JSON-RPC error it ended with.

    ``result`` is the protocol result (``CallToolResult``, ``GetPromptResult``, ...),
    secrets already masked; ``error`` the JSON-RPC error object (``code``,
    ``message``, ``data``). ``http_status`` and ``headers`` are what Streamable HTTP
    answers with. ``outcome`` and ``error_type`` go to the receipt.
    """

    outcome: Outcome
    result: JsonObject | None = None
    error: JsonObject | None = None
    http_status: int = 200
    headers: tuple[tuple[str, str], ...] = ()
    error_type: str | None = None
    """The qualified class of the exception that ended the call, if any."""
    error_ref: str | None = None
    """The log reference shown for an internal error."""
    body: bytes | None = attrs.field(default=None, repr=False)
    """``result`` as the client receives it, set by the runner's ``encode`` step
    from what the chain returned (masked); None until then."""

    def __attrs_post_init__(self) -> None:
        # One check of every field, not a validator each: two endings are made
        # per call (and no ``dict | None``, which builds a union each time). The
        # headers, empty on nearly every call, are checked only when given.
        if self.headers != ():
            object.__setattr__(self, "headers", _headers(self.headers))
        result, error = self.result, self.error
        if (
            self.outcome not in _OUTCOMES
            or not (result is None or isinstance(result, dict))
            or not (error is None or isinstance(error, dict))
            or type(self.http_status) is not int
            or not 100 <= self.http_status <= 599
        ):
            _refuse(self)

    @classmethod
    def refused(
        cls,
        message: str,
        *,
        data: JsonValue = None,
        http_status: int = 403,
        headers: tuple[tuple[str, str], ...] = (),
        code: int = REFUSED,
    ) -> Ending:
        """End the call before its handler with a JSON-RPC error (outcome ``refused``).

        Over Streamable HTTP the reply has ``http_status`` and ``headers`` (for
        example ``WWW-Authenticate``); other transports send the error alone.
        """
        error: JsonObject = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        return cls(
            outcome="refused", error=error, http_status=http_status, headers=headers
        )

    def encoded(self) -> bytes:
        """The result as one compact JSON text, as the ``encode`` step made it
        (encoded now for an ending that did not pass it: a refusal before it).

        Raises:
            ValueError: for NaN or infinity; TypeError for a value that is not JSON.
        """
        if self.body is not None:
            return self.body
        assert self.result is not None
        return encode_message(self.result)


#: The receipt's ``error_type`` of a call answered "busy" (no slot, no waiting place).
BUSY_TYPE = "trio_mcp.Busy"

#: Seconds a client told "busy" is asked to wait before it tries again.
BUSY_RETRY_AFTER = 1


def busy(reason: str) -> Ending:
    """-32000 with HTTP 503 and ``Retry-After``: no call slot or waiting place is free."""
    ending = Ending.refused(
        wire.busy_message(reason),
        data={"retryable": True},
        http_status=503,
        headers=(("retry-after", str(BUSY_RETRY_AFTER)),),
        code=wire.SERVER_BUSY,
    )
    return attrs.evolve(ending, error_type=BUSY_TYPE)


def _refuse(ending: Ending) -> None:
    """The ``InvalidArgument`` of the first field of ``ending`` that cannot work."""
    if ending.outcome not in _OUTCOMES:
        expected = "one of " + ", ".join(repr(o) for o in get_args(Outcome))
        raise checks.invalid("Ending.outcome", expected, ending.outcome)
    if not isinstance(ending.result, dict | None):
        raise checks.invalid(
            "Ending.result", "a dict (a JSON object) or None", ending.result
        )
    if not isinstance(ending.error, dict | None):
        raise checks.invalid(
            "Ending.error", "a dict (a JSON object) or None", ending.error
        )
    raise checks.invalid(
        "Ending.http_status", "an HTTP status (100-599)", ending.http_status
    )


class Next(Protocol):
    """The rest of the chain, as a step sees it: await it to run the call further."""

    async def __call__(self, call: Call, /) -> Ending: ...


class Middleware(Protocol):
    """One step of the chain: ``async def step(call, next) -> Ending``."""

    async def __call__(self, call: Call, next: Next, /) -> Ending: ...

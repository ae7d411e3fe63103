"""``call_for``: the call a middleware step receives, built without serving.

A step is ``async def step(call, next) -> Ending``. To unit-test one, a test needs
the ``Call`` the server would hand it; ``call_for`` builds it the way the server
does (the request's ordered checks, the catalog's entry, the context with its
grants and deadline, ``Secret`` arguments wrapped), and the test passes its own
``next``: a function returning the ``Ending`` it wants the rest of the chain to
give, or ``server``'s own chain by awaiting nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping

from .._authority import Grants
from .._dispatch import Call, Caller
from .._dispatch._calls import new_call
from .._dispatch._request import Failure
from .._errors import InvalidArgument
from .._json import JsonObject
from .._protocol import _wire as wire
from .._protocol._jsonrpc import Request
from .._serving import Serving

__all__ = ["call_for"]

#: The client a built call says it comes from.
_CLIENT_INFO: JsonObject = {"name": "trio-mcp-testing", "version": "1"}


def call_for(
    server: Serving,
    tool: str,
    arguments: Mapping[str, object] | None = None,
    *,
    principal: object | None = None,
    allow: Grants = (),
    client_capabilities: JsonObject | None = None,
    request_id: str | int = 1,
) -> Call:
    """Return the ``Call`` a middleware step of ``server`` receives for ``tool``.

    Built as a ``tools/call`` request of a 2026-07-28 client is: the ordered
    checks, the catalog's entry, the call's ``ToolContext`` (grants resolved,
    deadline set when the tool has a ``timeout``) and its arguments as received,
    a ``Secret[str]`` parameter wrapped in ``Secret``. Nothing runs: the test
    awaits ``step(call, next)`` with a ``next`` of its own. Call it inside a
    Trio task when the tool has a ``timeout`` (its deadline is on Trio's clock).

    Args:
        server: The server whose catalog has the tool.
        tool: The tool's wire name.
        arguments: The arguments as a client would send them (JSON values).
        principal: Who is calling, as the transport authenticated it.
        allow: The host's grant (capabilities, or a function of the principal).
        client_capabilities: What the client declares (``_meta``); none by
            default.
        request_id: The request's id.

    Raises:
        McpError.InvalidArgument: if ``server`` serves no tool ``tool``, or the
            arguments are not an object (the -32602 a client would receive).
    """
    dispatcher = server._dispatcher
    meta: JsonObject = {
        wire.META_PROTOCOL_VERSION: wire.PROTOCOL_VERSION,
        wire.META_CLIENT_CAPABILITIES: dict(client_capabilities or {}),
        wire.META_CLIENT_INFO: dict(_CLIENT_INFO),
    }
    params: JsonObject = {"name": tool, "_meta": meta}
    if arguments is not None:
        given = dict(arguments) if isinstance(arguments, Mapping) else arguments
        params["arguments"] = given  # type: ignore[assignment]
    request = Request(request_id, "tools/call", params)
    caller = Caller(principal=principal, allow=allow)
    try:
        checked = dispatcher.check(request, caller, dispatcher.plain)
    except Failure as failure:
        raise InvalidArgument(f"call_for({tool!r}): {failure.message}") from None
    entry = dispatcher.catalog.tools.get(tool)
    if entry is None:
        served = ", ".join(sorted(dispatcher.catalog.tools)) or "none"
        raise InvalidArgument(
            f"call_for: the server serves no tool {tool!r} (its tools: {served})"
        )
    received = checked.params.get("arguments", {})
    if not isinstance(received, dict):
        raise InvalidArgument(f"call_for({tool!r}): arguments must be an object")
    return new_call(checked, entry, tool, received)

"""Bearer tokens at the HTTP edge: who is calling, and the 403 step-up.

A mounted app with ``auth=`` (a ``BearerGate``, such as ``trio_mcp.auth.BearerAuth``)
admits each request here before reading its body; a refusal is the gate's
``Challenge``. Once the body is parsed, a call (``tools/call``, ``prompts/get``,
``resources/read``) whose declaration needs capabilities the token's scopes do not
grant, but that mapped scopes would, is refused with 403 ``insufficient_scope``
*before* the dispatcher runs anything of it (MCP revision 2026-07-28, authorization:
step-up), and leaves a ``refused`` receipt. A capability no scope grants is left to
the dispatcher's ordinary refusal (an ``isError`` result and a receipt). The refusal
has its request span too (``mcp.outcome`` ``refused``).
"""

from __future__ import annotations

import time

from .. import _otel
from .._authority import Receipt, resolve_grants
from .._authority._bearer import Admission, BearerGate, Challenge
from .._context import principal_id
from .._dispatch import Caller, Dispatcher
from .._dispatch._catalog import Entry
from .._protocol import _wire as wire
from .._protocol._jsonrpc import Request

__all__ = ["caller_of", "step_up"]

_KINDS = {"tools/call": "tool", "prompts/get": "prompt", "resources/read": "resource"}


def caller_of(admission: Admission, base: Caller, *, hide: bool) -> Caller:
    """The caller of an admitted request: its principal, the token's grants and
    ``allow``; with ``hide``, lists show only what those grants can use."""
    granted = admission.granted | resolve_grants(base.allow, admission.principal)
    return Caller(
        principal=admission.principal,
        allow=granted,
        closing=base.closing,
        headers=base.headers,
        visible=granted if hide else None,
    )


def _entry(dispatcher: Dispatcher, request: Request) -> tuple[str, Entry] | None:
    """The wire name and catalog entry a call names, if the request is one."""
    params = request.params if isinstance(request.params, dict) else {}
    catalog = dispatcher.catalog
    if request.method in ("tools/call", "prompts/get"):
        name = params.get("name")
        table = catalog.tools if request.method == "tools/call" else catalog.prompts
        entry = table.get(name) if isinstance(name, str) else None
        return None if entry is None else (name, entry)  # type: ignore[return-value]
    if request.method == "resources/read":
        uri = params.get("uri")
        found = catalog.find_resource(uri) if isinstance(uri, str) else None
        return None if found is None else (uri, found[0])  # type: ignore[return-value]
    return None


async def step_up(
    dispatcher: Dispatcher,
    request: Request,
    gate: BearerGate,
    admission: Admission,
    caller: Caller,
) -> Challenge | None:
    """The 403 refusing a call before it runs, or None to let it through.

    A refused call leaves a ``refused`` receipt, as the dispatcher's refusals do.
    """
    named = _entry(dispatcher, request)
    if named is None:
        return None  # not a call, or an unknown name: the dispatcher answers it
    name, entry = named
    granted = resolve_grants(caller.allow, admission.principal)
    missing = entry.required - granted
    if not missing:
        return None
    challenge = gate.step_up(admission, missing)
    if challenge is not None:
        await _account(dispatcher, request, (name, entry), granted, admission)
    return challenge


async def _account(
    dispatcher: Dispatcher,
    request: Request,
    named: tuple[str, Entry],
    granted: frozenset[str],
    admission: Admission,
) -> None:
    name, entry = named
    params = request.params if isinstance(request.params, dict) else {}
    raw = params.get("_meta")
    meta = raw if isinstance(raw, dict) else None
    client = meta.get(wire.META_CLIENT_INFO) if meta is not None else None
    receipt = Receipt(
        kind=_KINDS[request.method],  # type: ignore[arg-type]
        declaration=entry.declaration,
        name=name,
        required=entry.required,
        granted=granted,
        outcome="refused",
        error_type="insufficient_scope",
        principal_id=principal_id(admission.principal),
        client=client.get("name") if isinstance(client, dict) else None,  # type: ignore[arg-type]
        request_id=request.id,
        started=time.time(),
        duration=0.0,
    )
    dispatcher.log_receipt(receipt)
    await dispatcher.deliver(receipt)
    with _otel.request_span(request.method, meta, request.id):
        kind = _KINDS[request.method]
        _otel.annotate(
            {
                f"mcp.{kind}.{'uri' if kind == 'resource' else 'name'}": name,
                "mcp.outcome": "refused",
            },
            name=None if kind == "resource" else f"{request.method} {name}",
            error="insufficient_scope",
        )

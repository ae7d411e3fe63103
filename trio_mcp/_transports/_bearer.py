"""Bearer tokens at the HTTP edge: who is calling, with what grants and step-up.

A mounted app with ``auth=`` (a ``BearerGate``, such as ``trio_mcp.auth.BearerAuth``)
admits each request before reading its body; a refusal is the gate's ``Challenge``
(401, or 403 for missing ``required_scopes``). An admitted request's ``Caller``
carries the token's principal, the capabilities its scopes grant together with
``allow``, and the token itself (``Caller.credentials``, a ``Token``).

``StepUp`` is a step of the app's edge, just before ``grant``: it refuses a call
whose declaration needs capabilities the token's scopes do not grant, but that
mapped scopes would, with its 403 ``insufficient_scope`` before the handler runs
(MCP revision 2026-07-28, authorization: step-up). ``account`` leaves the
``refused`` receipt and the span, as for every refusal. A capability no scope
grants is left to ``grant``: the ordinary refusal (an ``isError`` result).
"""

from __future__ import annotations

import attrs

from .._authority import resolve_grants
from .._authority._bearer import Admission, BearerGate
from .._dispatch import Call, Caller, Ending, Next

__all__ = ["INSUFFICIENT_SCOPE_TYPE", "StepUp", "Token", "caller_of"]

#: The receipt's ``error_type`` of a call refused for its token's scopes.
INSUFFICIENT_SCOPE_TYPE = "insufficient_scope"


@attrs.frozen(eq=False)
class Token:
    """The bearer token a caller presented: its admission, and where the resource's
    RFC 9728 metadata is (named by every challenge)."""

    admission: Admission
    metadata_url: str


def caller_of(
    admission: Admission, base: Caller, gate: BearerGate, metadata_url: str
) -> Caller:
    """The caller of an admitted request: its principal, the token's grants and
    ``allow``, the token; with ``hide_ungranted``, lists show only what those
    grants can use."""
    granted = admission.granted | resolve_grants(base.allow, admission.principal)
    return attrs.evolve(
        base,
        principal=admission.principal,
        allow=granted,
        visible=granted if gate.hide_ungranted else None,
        credentials=Token(admission, metadata_url),
    )


@attrs.frozen(eq=False)
class StepUp:
    """The step that answers 403 ``insufficient_scope`` where scopes would grant
    what the call lacks."""

    gate: BearerGate

    async def __call__(self, call: Call, next: Next) -> Ending:
        missing = call.required - call.granted
        token = call.caller.credentials
        if missing and isinstance(token, Token):
            challenge = self.gate.step_up(token.admission, missing)
            if challenge is not None:
                header = challenge.header(token.metadata_url).decode("latin-1")
                ending = Ending.refused(
                    challenge.description,
                    headers=(("www-authenticate", header),),
                    http_status=403,
                )
                return attrs.evolve(ending, error_type=INSUFFICIENT_SCOPE_TYPE)
        return await next(call)

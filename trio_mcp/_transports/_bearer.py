"""Bearer tokens at the HTTP edge: who is calling, with what grants and step-up.

A mounted app with ``auth=`` (a ``BearerGate``, such as ``trio_mcp.auth.BearerAuth``)
admits each request before reading its body; a refusal is the gate's ``Challenge``
(401, or 403 for missing ``required_scopes``). An admitted request's ``Caller``
carries the token's principal, the capabilities its scopes grant together with
``allow``, and a ``StepUp``: the call runner's ``grant`` step refuses a call whose
declaration needs capabilities the token's scopes do not grant, but that mapped
scopes would, with its 403 ``insufficient_scope`` before the handler runs (MCP
revision 2026-07-28, authorization: step-up). The runner leaves the ``refused``
receipt and the span, as for its other refusals. A capability no scope grants is the
ordinary refusal (an ``isError`` result).
"""

from __future__ import annotations

import attrs

from .._authority import resolve_grants
from .._authority._bearer import Admission, BearerGate
from .._dispatch import Caller

__all__ = ["caller_of"]


@attrs.frozen
class _StepUp:
    """The ``StepUp`` of one admitted request (see ``Caller.step_up``)."""

    gate: BearerGate
    admission: Admission
    metadata_url: str

    def __call__(self, missing: frozenset[str]) -> tuple[str, str] | None:
        challenge = self.gate.step_up(self.admission, missing)
        if challenge is None:
            return None
        header = challenge.header(self.metadata_url).decode("latin-1")
        return challenge.description, header


def caller_of(
    admission: Admission, base: Caller, gate: BearerGate, metadata_url: str
) -> Caller:
    """The caller of an admitted request: its principal, the token's grants and
    ``allow``, its step-up; with ``hide_ungranted``, lists show only what those
    grants can use."""
    granted = admission.granted | resolve_grants(base.allow, admission.principal)
    return attrs.evolve(
        base,
        principal=admission.principal,
        allow=granted,
        visible=granted if gate.hide_ungranted else None,
        step_up=_StepUp(gate, admission, metadata_url),
    )

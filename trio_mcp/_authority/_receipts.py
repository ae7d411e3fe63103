"""Receipts: the evidence every call leaves, and their delivery.

A receipt never holds argument values or secret plaintext: only what was called, by
whom, under which grant, and how it ended.

One receipt accounts for one declaration being called: every ``tools/call``,
``prompts/get`` and ``resources/read`` that names a declaration leaves exactly one,
whether it ends ``ok``, ``error``, ``refused``, ``invalid`` (bad arguments or a bad
``requestState``), ``timeout``, ``cancelled`` or ``internal``. A request that never
reaches a declaration (an unknown tool or prompt, a URI no resource matches, a
``params`` without a string ``name`` or with non-object ``arguments``) is a -32602
protocol error and leaves none: there is no declaration, grant or handler to account
for.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Literal, TypeAlias

import attrs

from .._instance import instance_id

__all__ = ["Outcome", "Receipt", "ReceiptSink", "receipt_logger"]

Outcome: TypeAlias = Literal[
    "ok",
    "error",
    "refused",
    "invalid",
    "not_found",
    "cancelled",
    "timeout",
    "internal",
]
"""How a call ended. ``not_found``: a resource read whose URI matched a template but
named nothing (the reader raised ``ResourceNotFound``); ``invalid`` is for a request
that is malformed or does not fit."""

receipt_logger = logging.getLogger("trio_mcp.receipts")


@attrs.frozen(kw_only=True)
class Receipt:
    """What one ``tools/call``, ``prompts/get`` or ``resources/read`` did."""

    kind: Literal["tool", "prompt", "resource", "completion"]
    declaration: str
    """The handler as ``module:qualname``."""
    name: str
    """The wire name (or URI for resources)."""
    required: frozenset[str]
    granted: frozenset[str]
    outcome: Outcome
    error_type: str | None
    """The qualified class of the exception that ended the call, if any."""
    principal_id: str | None
    client: str | None
    request_id: str | int
    started: float
    """Wall-clock start, seconds since the epoch."""
    duration: float
    """Seconds, measured on a monotonic clock."""
    trace_id: str | None = None
    error_ref: str | None = None
    """The reference shown to the client for an internal error."""
    upstream: str | None = None
    """The upstream server that answered the call, named without credentials
    (``Upstream.label``), when this server relayed it; None for its own."""
    instance: str = attrs.field(factory=instance_id)
    """The process that served the call: ``"<replica>:<pid>"`` (see ``TRIO_MCP_INSTANCE``)."""

    def as_record(self) -> dict[str, object]:
        """Return the receipt as a flat dict for structured logging."""
        record = attrs.asdict(self, recurse=False)
        record["required"] = sorted(self.required)
        record["granted"] = sorted(self.granted)
        return record


ReceiptSink: TypeAlias = Callable[[Receipt], "Awaitable[None] | None"]

"""A call's receipt and its span: how a call that ended is recorded.

``account`` (``_runner``) leaves one ``Receipt`` for every call, however it ended,
and names the call and its outcome on the request's span when there is one.
"""

from __future__ import annotations

import logging

from .. import _otel
from .._authority import Receipt
from .._authority import receipt_logger as _receipt_logger
from ._call import Call, Ending
from ._request import CANCELLED_TYPE, REFUSED_TYPE, TIMEOUT_TYPE

__all__ = ["annotate_span", "log_receipt", "receipt"]


def log_receipt(receipt: Receipt) -> None:
    """Log a receipt as a structured record on ``trio_mcp.receipts``."""
    if _receipt_logger.isEnabledFor(logging.INFO):
        _receipt_logger.info("receipt", extra={"receipt": receipt.as_record()})


#: The ``error_type`` of an ending that named none (an adopter's ``ToolReply.error``,
#: a check of an extension): every receipt but an ``ok`` one names its error.
_UNNAMED: dict[str, str] = {
    "error": "trio_mcp.ToolError",
    "invalid": "trio_mcp.InvalidParams",
    "not_found": "trio_mcp.ResourceNotFound",
    "refused": REFUSED_TYPE,
    "timeout": TIMEOUT_TYPE,
    "cancelled": CANCELLED_TYPE,
    "internal": "trio_mcp.InternalError",
}


def receipt(call: Call, ending: Ending, started: float, duration: float) -> Receipt:
    """The receipt of a call that ended with ``ending``."""
    target, ctx = call.target, call.context
    return Receipt(
        kind=target.kind,
        declaration=target.declaration,
        name=call.name,
        required=target.required,
        granted=ctx.granted,
        outcome=ending.outcome,
        error_type=ending.error_type or _UNNAMED.get(ending.outcome),
        principal_id=ctx.principal_id,
        client=ctx.client.get("name") if ctx.client else None,  # type: ignore[arg-type]
        request_id=call.request_id,
        started=started,
        duration=duration,
        trace_id=_otel.parse_traceparent(call.request.meta),
        error_ref=ending.error_ref,
        upstream=target.upstream,
    )


def annotate_span(call: Call, ending: Ending) -> None:
    """Put the call's name and outcome on the request's span (there is one)."""
    kind = call.target.kind
    uri = kind == "resource"
    _otel.annotate(
        {
            f"mcp.{kind}.{'uri' if uri else 'name'}": call.name,
            "mcp.outcome": ending.outcome,
        },
        name=None if uri else f"{call.method} {call.name}",
        error=ending.error_type,
    )

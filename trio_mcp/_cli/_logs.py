"""Logging for the command line: one stderr handler, receipts as readable lines.

stdout may be the protocol stream (``run``, ``mcp``), so every log line and the
start summary go to stderr. The level comes from ``--log-level``, else
``TRIO_MCP_LOG_LEVEL``, else ``warning``; at ``info`` every receipt shows.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Mapping

__all__ = ["LEVELS", "configure_logging", "level_from", "notification_line"]

LEVELS = ("debug", "info", "warning", "error", "critical")
ENV_LEVEL = "TRIO_MCP_LOG_LEVEL"
DEFAULT_LEVEL = "warning"


class BadLevel(ValueError):
    """``TRIO_MCP_LOG_LEVEL`` names no logging level."""


def level_from(option: str | None, environ: Mapping[str, str] = os.environ) -> str:
    """Return the level to use: the option, else the environment, else ``warning``.

    Raises:
        BadLevel: if the environment variable is set to an unknown level.
    """
    if option:
        return option
    value = environ.get(ENV_LEVEL, "").strip().lower()
    if not value:
        return DEFAULT_LEVEL
    if value not in LEVELS:
        raise BadLevel(
            f"{ENV_LEVEL}={value!r} is not a level; use one of {', '.join(LEVELS)}"
        )
    return value


class _ReadableFormatter(logging.Formatter):
    """Render a receipt record as one line a person can scan."""

    def format(self, record: logging.LogRecord) -> str:
        receipt = getattr(record, "receipt", None)
        if isinstance(receipt, dict):
            return self.formatTime(record, "%H:%M:%S") + " " + _receipt_line(receipt)
        return super().format(record)


def _receipt_line(receipt: Mapping[str, object]) -> str:
    duration = receipt.get("duration")
    took = f"{duration * 1000:.1f}ms" if isinstance(duration, float) else "?"
    parts = [
        f"receipt {receipt.get('kind')} {receipt.get('name')!s}",
        f"{receipt.get('outcome')} in {took}",
        f"request={receipt.get('request_id')}",
    ]
    if receipt.get("principal_id") is not None:
        parts.append(f"principal={receipt.get('principal_id')}")
    if receipt.get("required"):
        parts.append(f"required={','.join(map(str, receipt.get('required') or ()))}")  # type: ignore[call-overload]
    if receipt.get("error_type"):
        parts.append(f"error={receipt.get('error_type')}")
    if receipt.get("error_ref"):
        parts.append(f"ref={receipt.get('error_ref')}")
    return " ".join(parts)


def configure_logging(level: str) -> None:
    """Send every log record at or above ``level`` to stderr, receipts included."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        _ReadableFormatter(
            "%(asctime)s %(levelname)s %(name)s: %(message)s", "%H:%M:%S"
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())


def notification_line(message: Mapping[str, object]) -> str | None:
    """A progress or log notification a call received, as one stderr line.

    ``trio-mcp call`` shows them at ``--log-level info`` (``debug`` adds the
    handler's debug logs), so a long tool is seen working. One line each: what
    the server wrote cannot start a line of its own.
    """
    line = _notification_text(message)
    return None if line is None else " ".join(line.splitlines())


def _notification_text(message: Mapping[str, object]) -> str | None:
    params = message.get("params")
    if not isinstance(params, Mapping):
        return None
    if message.get("method") == "notifications/progress":
        total = params.get("total")
        done = f"{params.get('progress')}" + ("" if total is None else f"/{total}")
        text = params.get("message")
        return f"progress {done}" + ("" if text is None else f": {text}")
    if message.get("method") == "notifications/message":
        data = params.get("data")
        shown = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        logger = params.get("logger")
        source = "" if logger is None else f" {logger}"
        return f"log {params.get('level')}{source}: {shown}"
    return None

"""``mcp.lock``: a digest of every entry a client sees, to notice contract changes.

A tool's name, description and schemas are what a model reads; a change to any of
them changes how models use the tool, so ``trio-mcp lock --check`` fails on it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from .._server import Server

__all__ = ["compare", "lock_data"]

LOCK_VERSION = 1


def _digest(entry: Any) -> str:
    canonical = json.dumps(
        entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def lock_data(server: Server) -> dict[str, Any]:
    """Return the lock document for ``server``: one digest per catalog entry."""
    entries: dict[str, dict[str, str]] = {"tools": {}, "resources": {}, "prompts": {}}
    for spec in server.catalog():
        wire = spec.to_wire()
        kind = type(spec).__name__
        if kind == "ToolSpec":
            entries["tools"][str(wire["name"])] = _digest(wire)
        elif kind == "PromptSpec":
            entries["prompts"][str(wire["name"])] = _digest(wire)
        else:
            key = wire.get("uri", wire.get("uriTemplate"))
            entries["resources"][str(key)] = _digest(wire)
    return {"version": LOCK_VERSION, "server": server.name, **entries}


def compare(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Return one line per difference between two lock documents (empty if equal)."""
    lines: list[str] = []
    for kind in ("tools", "resources", "prompts"):
        before: dict[str, str] = old.get(kind, {})
        after: dict[str, str] = new.get(kind, {})
        for name in sorted(before.keys() - after.keys()):
            lines.append(f"{kind[:-1]} '{name}' was removed")
        for name in sorted(after.keys() - before.keys()):
            lines.append(f"{kind[:-1]} '{name}' was added")
        for name in sorted(before.keys() & after.keys()):
            if before[name] != after[name]:
                lines.append(
                    f"{kind[:-1]} '{name}' changed (name, description or schema)"
                )
    return lines

"""Every word the revision's schema gives meaning to: keys, enum and const strings.

A secret that happens to be one of these is public vocabulary as much as a secret,
so the redaction tests draw secrets from it.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

__all__ = ["VOCABULARY"]


def _vocabulary() -> list[str]:
    """Every object key and enum (or const) string of the revision's schema."""
    text = resources.files("trio_mcp.testing").joinpath("schema-2026-07-28.json")
    found: set[str] = set()
    pending: list[Any] = [json.loads(text.read_text(encoding="utf-8"))]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            found.update(node)
            for key in ("enum", "const"):
                values = node.get(key)
                values = values if isinstance(values, list) else [values]
                found.update(v for v in values if isinstance(v, str))
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)
    return sorted(v for v in found if v and "*" not in v)


VOCABULARY = _vocabulary()

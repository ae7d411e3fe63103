"""Descriptions from docstrings: the first paragraph, and each parameter's entry.

docstring-parser reads the Google, NumPy and reST styles; we take only the short
and long description's first paragraph, so ``Args:`` never leaks into it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

import attrs
import docstring_parser

__all__ = ["Described", "describe"]


@attrs.frozen
class Described:
    """The description of a callable and of each documented parameter."""

    summary: str | None
    params: dict[str, str]


def describe(fn: Callable[..., object]) -> Described:
    """Return what ``fn``'s docstring says about it and its parameters."""
    doc = inspect.getdoc(fn)
    if not doc:
        return Described(None, {})
    parsed = docstring_parser.parse(doc)
    parts = [p for p in (parsed.short_description, parsed.long_description) if p]
    # A summary that runs onto a second line is still one paragraph.
    joiner = "\n\n" if parsed.blank_after_short_description else "\n"
    text = joiner.join(parts).strip()
    summary = " ".join(text.split("\n\n")[0].split()) if text else None
    params = {
        p.arg_name: " ".join(p.description.split())
        for p in parsed.params
        if p.description and p.description.strip()
    }
    return Described(summary or None, params)

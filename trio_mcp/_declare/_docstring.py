"""Descriptions from docstrings: the first paragraph, and each parameter's entry.

docstring-parser reads the Google, NumPy and reST styles; we take only the short
and long description's first paragraph, so ``Args:`` never leaks into it.
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    import docstring_parser

__all__ = ["Described", "describe", "undescribed"]

#: What each kind's description says, for the problem of a declaration without one.
_SAYS = {
    "tool": "what the tool does",
    "prompt": "what the prompt is for",
    "resource": "what the resource holds",
}


def undescribed(where: str, kind: str) -> str:
    """The problem of a declaration whose docstring gives no description."""
    return (
        f"{where}: has no description; write a docstring whose first paragraph "
        f"says {_SAYS[kind]}"
    )


#: A line that only the reST (``:param``), Epydoc (``@param``) or NumPy (a
#: ``----`` underline) parsers give meaning to.
_OTHER_STYLES = re.compile(r"^\s*[:@]|^\s*-{3,}\s*$", re.MULTILINE)


@attrs.frozen(eq=False)
class Described:
    """The description of a callable and of each documented parameter."""

    summary: str | None
    params: dict[str, str]


def describe(fn: Callable[..., object]) -> Described:
    """Return what ``fn``'s docstring says about it and its parameters."""
    doc = inspect.getdoc(fn)
    if not doc:
        return Described(None, {})
    parsed = _parse(doc)
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


@functools.cache
def _google() -> docstring_parser.google.GoogleParser:
    """One Google parser for every declaration (``google.parse`` builds one a call,
    compiling its section pattern each time); parsing leaves it unchanged."""
    import docstring_parser

    return docstring_parser.google.GoogleParser()


def _parse(doc: str) -> docstring_parser.Docstring:
    """``docstring_parser.parse`` with its automatic style, at a quarter of the cost.

    The automatic style runs all four parsers and keeps the one that found the
    most sections. A Google docstring whose sections the other three cannot
    read is therefore Google's result; only then is the Google parser trusted
    alone (declaring a thousand tools spent a sixth of its time here).
    """
    # Imported here: ``import trio_mcp`` does not need it (6 ms), a declaration does.
    import docstring_parser

    if not _OTHER_STYLES.search(doc):
        try:
            parsed = _google().parse(doc)
        except docstring_parser.ParseError:
            pass  # another style may still read it
        else:
            if parsed.meta:
                return parsed
    try:
        return docstring_parser.parse(doc)
    except Exception:  # ParseError, or IndexError on a lone ":" line
        # A docstring is prose: one the parsers cannot read still describes
        # the tool by its first paragraph, with no parameter entries.
        plain = docstring_parser.Docstring()
        plain.short_description = doc
        return plain

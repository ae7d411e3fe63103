"""The docstring shortcut reads exactly what docstring-parser's automatic style reads.

``describe`` trusts the Google parser alone when no line means something to the
other styles (a speed-up for large catalogs); these tests hold it to the full
automatic parse on docstrings built from every style's pieces, mixed.
"""

from __future__ import annotations

import docstring_parser
from hypothesis import given, settings
from hypothesis import strategies as st

from trio_mcp import tool
from trio_mcp._declare._docstring import _parse

PIECES = [
    "Search the archive.",
    "Longer text: with a colon in it.",
    "",
    "Args:",
    "Arguments:",
    "    query: Words to look for,",
    "        continued on a second line.",
    "    limit (int): Most results.",
    "    limit: ",
    "Returns:",
    "    The matches.",
    "Raises:",
    "    ValueError: when it must.",
    "Example:",
    "    >>> search('x')",
    ":param query: Words.",
    ":returns: The matches.",
    "@param query: Words.",
    "Parameters",
    "----------",
    "query : str",
    "    Words to look for.",
    "Notes",
    "-----",
    "  : a line that starts with a colon",
]


def _seen(doc: docstring_parser.Docstring) -> object:
    return (
        doc.short_description,
        doc.long_description,
        doc.blank_after_short_description,
        [(p.arg_name, p.description) for p in doc.params],
        len(doc.meta),
    )


def _auto(text: str) -> object:
    try:
        return _seen(docstring_parser.parse(text))
    except Exception as exc:  # the library also raises IndexError
        return type(exc)


@settings(max_examples=400)
@given(
    st.lists(
        st.one_of(st.sampled_from(PIECES), st.text(max_size=12)),
        max_size=14,
    )
)
def test_the_shortcut_equals_the_automatic_style(lines: list[str]) -> None:
    """Where the automatic style fails, the whole text is the description."""
    text = "\n".join(lines)
    expected = _auto(text)
    if isinstance(expected, type):
        expected = (text, None, False, [], 0)
    assert _seen(_parse(text)) == expected


def test_a_docstring_no_parser_reads_still_describes_the_tool() -> None:
    """docstring-parser 0.18 raises IndexError on a line holding only ":"."""

    @tool
    def odd(query: str) -> str:
        """Search the archive.

        :
        """
        return query

    assert odd.spec().description == "Search the archive."


def test_a_google_docstring_takes_the_shortcut_and_keeps_every_entry() -> None:
    text = (
        "Search.\n\nArgs:\n    query: Words.\n    limit: Most.\n\nReturns:\n    Hits."
    )
    parsed = _parse(text)
    assert [(p.arg_name, p.description) for p in parsed.params] == [
        ("query", "Words."),
        ("limit", "Most."),
    ]
    assert _seen(parsed) == _auto(text)

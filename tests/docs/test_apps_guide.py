"""The apps guide shows the view of examples/ticket_board.py, whose tests run its script."""

from __future__ import annotations

from pathlib import Path

from docblocks import blocks

ROOT = Path(__file__).resolve().parents[2]


def test_the_guide_shows_the_examples_view() -> None:
    [shown] = [
        block.code
        for block in blocks(ROOT / "docs" / "guides" / "apps.md")
        if block.title == "ticket_board.html"
    ]

    assert (ROOT / "examples" / "ticket_board.html").read_text(
        encoding="utf-8"
    ) == shown

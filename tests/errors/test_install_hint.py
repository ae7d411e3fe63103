"""Every hint to add an extra uses the spelling that works (issue 45, item 9).

trio-mcp is on no public package index, so ``pip install "trio-mcp[redis]"`` fails in
a fresh virtualenv. Messages say ``install_hint``'s wheel-based spelling, and no page
or message of the package gives the index spelling.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trio_mcp._errors import install_hint
from trio_mcp._version import __version__

ROOT = Path(__file__).resolve().parents[2]
INDEX_SPELLING = re.compile(r"""pip install\s+["']?trio[-_]mcp\[""")


def sources() -> list[Path]:
    return [
        *sorted((ROOT / "trio_mcp").rglob("*.py")),
        *sorted((ROOT / "docs").rglob("*.md")),
        ROOT / "README.md",
    ]


@pytest.mark.parametrize("path", sources(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_page_or_message_installs_an_extra_from_an_index(path: Path) -> None:
    text = path.read_text()

    assert [] == INDEX_SPELLING.findall(text)


@given(st.sampled_from(["http", "redis", "auth", "metrics", "websocket", "client"]))
def test_the_hint_names_the_wheel_and_the_clone(extra: str) -> None:
    hint = install_hint(extra)

    assert (
        f'pip install "/path/to/trio_mcp-{__version__}-py3-none-any.whl[{extra}]"'
        in hint
    )
    assert f'pip install ".[{extra}]" in the clone' in hint
    assert not INDEX_SPELLING.search(hint)

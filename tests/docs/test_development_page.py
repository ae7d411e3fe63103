"""docs/development.md says what scripts/bootstrap and scripts/test do (issue 45, item 2).

The page went stale once (8 extras where bootstrap installed 11, one ``npm ci`` of
four, 6 stages of 9): each list is read from the scripts themselves and must appear
on the page, whole and in order.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "development.md").read_text()
BOOTSTRAP = (ROOT / "scripts" / "bootstrap").read_text()
TEST = (ROOT / "scripts" / "test").read_text()


def in_order(items: list[str], text: str) -> list[str]:
    """The items that are missing from ``text`` or out of their order."""
    at, wrong = 0, []
    for item in items:
        found = text.find(item, at)
        if found < 0:
            wrong.append(item)
        else:
            at = found + len(item)
    return wrong


def test_the_page_installs_the_extras_bootstrap_installs() -> None:
    (extras,) = re.findall(r'^_TRIO_MCP_PY_EXTRAS="([^"]+)"$', BOOTSTRAP, re.M)

    assert f'pip install -e ".[{extras}]"' in PAGE


def test_the_page_names_every_npm_install_of_bootstrap() -> None:
    folders = re.findall(r'log "npm ci in (\S+)/ ', BOOTSTRAP)
    assert folders, "bootstrap's npm ci steps log 'npm ci in FOLDER/ ...'"
    assert "trio-mcp dev --install-only" in BOOTSTRAP

    missing = [f for f in folders if f"`{f}/`" not in PAGE]
    assert [] == missing
    assert "`trio-mcp dev --install-only`" in PAGE
    count = len(folders) + 1  # and the Inspector's
    words = {3: "three", 4: "four", 5: "five"}
    assert f"the {words[count]} `npm ci`" in PAGE


def test_the_page_lists_every_stage_of_scripts_test_in_order() -> None:
    stages = re.findall(r'^run_stage "([^"]+)"', TEST, re.M)
    assert len(stages) >= 9

    listed = re.findall(r"^\d+\. `([^`]+)`:", PAGE, re.M)
    assert stages == listed[-len(stages) :]
    assert [] == in_order([f"`{s}`" for s in stages], PAGE)


def test_the_page_gives_the_first_run_and_the_up_to_date_durations() -> None:
    assert re.search(r"first run in a fresh clone takes about [\w ]+ minutes", PAGE)
    assert "under a second when nothing changed" in PAGE


def test_the_readme_says_mkdocs_serve_needs_the_docs_extra() -> None:
    """Issue 45, item 16: ``mkdocs serve`` is not in the bare install."""
    readme = (ROOT / "README.md").read_text()
    pyproject = (ROOT / "pyproject.toml").read_text()

    (docs_extra,) = re.findall(r"^docs = \[(.*)\]$", pyproject, re.M)
    assert '"mkdocs' in docs_extra
    assert re.search(
        r"`mkdocs serve` with the `docs` extra: `pip install \"\.\[docs\]\"`", readme
    )

"""The fenced code blocks of a Markdown page, and console output matching.

Shared by test_docs_code.py (every page, in-process) and test_first_hour.py (the
first-hour walk, in a fresh virtualenv with the built wheel).
"""

from __future__ import annotations

import re
import shlex
import subprocess
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import NamedTuple

__all__ = ["Block", "blocks", "check_console", "matches"]

FENCE = re.compile(r"^```(\w+)?([^\n]*)\n(.*?)^```\s*$", re.MULTILINE | re.DOTALL)
TITLE = re.compile(r'title="([^"]+)"')


class Block(NamedTuple):
    language: str
    title: str | None
    code: str
    line: int


def blocks(page: Path) -> Iterator[Block]:
    """The fenced blocks of a page, in order."""
    text = page.read_text(encoding="utf-8")
    for match in FENCE.finditer(text):
        title = TITLE.search(match.group(2) or "")
        yield Block(
            match.group(1) or "",
            title.group(1) if title else None,
            match.group(3),
            text.count("\n", 0, match.start()) + 1,
        )


def matches(expected: str, actual: str) -> bool:
    """Whether ``actual`` is ``expected``, where a line ``...`` matches any lines and
    a ``...`` inside a line any text."""
    parts = []
    for line in expected.strip("\n").splitlines():
        if line.strip() == "...":
            parts.append(r"(?:.*\n)*?")
        else:
            parts.append(
                ".*".join(map(re.escape, line.rstrip().split("..."))) + r"[ \t]*\n"
            )
    return re.fullmatch("".join(parts), actual.strip("\n") + "\n") is not None


def check_console(
    code: str,
    cwd: Path,
    env: Mapping[str, str],
    argv: Callable[[str], list[str]] = shlex.split,
) -> None:
    """Run each ``$ command`` of a console block (``argv`` of its text) in ``cwd``
    with ``env``; what it prints must match the lines the page shows under it."""
    command: str | None = None
    expected: list[str] = []
    for line in [*code.splitlines(), "$ "]:
        if not line.startswith("$ "):
            expected.append(line)
            continue
        if command:
            done = subprocess.run(argv(command), cwd=cwd, env=env, capture_output=True,
                                  text=True, timeout=120, check=False)  # fmt: skip
            output = done.stdout + done.stderr
            assert matches("\n".join(expected), output), (
                f"$ {command}\n--- expected:\n" + "\n".join(expected)
                + f"\n--- got (exit {done.returncode}):\n{output}"
            )  # fmt: skip
        command, expected = line[2:].strip(), []

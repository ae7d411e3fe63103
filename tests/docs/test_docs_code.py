"""Every code block of the docs and the README runs, so the docs cannot rot.

The rules, by the block's language (its fence's info string):

* ``python``: compiled as a file of its own (``dont_inherit=True``: this module's
  ``from __future__ import annotations`` must not hide a missing import); without a
  title, executed in order in one module per page (named
  ``docs_<page>``, never ``"__main__"``, so ``if __name__ == "__main__":`` bodies that would
  serve forever are skipped); then every ``test_*`` function the page defined is
  called (async ones under ``trio.run``).
* any block with ``title="NAME"`` (``python``, ``toml``, ``json``): written to a
  scratch directory as NAME (``examples/`` is copied there first); when the page
  wrote a ``test_*.py`` file, pytest runs in that directory in a subprocess.
* ``console``: each ``$ command`` runs in that directory (``trio-mcp`` is this
  checkout's), and the lines after it are its expected output, where a line
  ``...`` matches any lines and a ``...`` inside a line any text.
* ``json`` and ``toml`` without a title: parsed. ``text`` and bare fences are prose
  (diagrams, shown output). ``bash``: checked with ``bash -n``
  (set-up and long-running commands are shown, not run). ``html`` has a title: it is
  a file the page's other blocks use (an MCP Apps view).
"""

from __future__ import annotations

import inspect
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
import types
from pathlib import Path
from typing import Any

import pytest
import trio
from docblocks import blocks, check_console

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([*ROOT.joinpath("docs").rglob("*.md"), ROOT / "README.md"])


def _page_id(page: Path) -> str:
    return str(page.relative_to(ROOT))


def _run_tests_defined(namespace: dict[str, Any]) -> None:
    for name, value in list(namespace.items()):
        if not name.startswith("test_") or not callable(value):
            continue
        if inspect.signature(value).parameters:
            continue  # a pytest test shown for its fixtures; run by a titled file
        if inspect.iscoroutinefunction(value):
            trio.run(value)
        else:
            value()


def _argv(command: str) -> list[str]:
    """A console line's command; ``trio-mcp`` as this interpreter's module."""
    argv = shlex.split(command)
    if argv[0] == "trio-mcp":
        argv = [sys.executable, "-m", "trio_mcp", *argv[1:]]
    return argv


def _scratch(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRIO_MCP_")}
    env.update(HOME=str(tmp_path / "home"), NO_COLOR="1", COLUMNS="100",
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}")  # fmt: skip
    return tmp_path, env


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_every_code_block_of_the_page_runs(
    page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Our choice: documentation is tested like code."""
    cwd, env = _scratch(tmp_path)
    monkeypatch.chdir(cwd)
    monkeypatch.syspath_prepend(str(cwd))
    module = types.ModuleType("docs_" + re.sub(r"\W", "_", _page_id(page)))
    monkeypatch.setitem(sys.modules, module.__name__, module)
    namespace: dict[str, Any] = module.__dict__
    has_tests = False
    for block in blocks(page):
        where = f"{_page_id(page)}:{block.line}"
        if block.title is not None:
            target = cwd / block.title
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.code)
            has_tests = has_tests or Path(block.title).name.startswith("test_")
        if block.language == "python":
            # As a file of its own would: no __future__ import of this test module
            # leaks in (a missing `from typing import Any` hid behind it).
            code = compile(block.code, where, "exec", dont_inherit=True)
            if block.title is None:
                exec(code, namespace)
        elif block.language == "console":
            check_console(block.code, cwd, env, _argv)
        elif block.language == "json":
            json.loads(block.code)
        elif block.language == "toml":
            tomllib.loads(block.code)
        elif block.language == "bash":
            subprocess.run(["bash", "-n"], input=block.code, text=True, check=True)
        elif block.language == "html":
            assert block.title is not None, (
                f"{where}: an html block is a file: title it"
            )
        elif block.language not in ("python", "text", ""):
            pytest.fail(f"{where}: no rule runs a {block.language!r} block")
    _run_tests_defined(namespace)
    if has_tests:
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
                              cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=300, check=False)  # fmt: skip
        assert 0 == done.returncode, done.stdout + done.stderr

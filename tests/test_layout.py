"""The tests are laid out like the package, and every test file name is unique.

A folder under ``tests/`` is named after the part of ``trio_mcp`` it tests, without the
leading underscore (``tests/declare`` for ``trio_mcp/_declare``, ``tests/limits`` for
``trio_mcp/_limits.py``), or is one of the few folders that test no single part
(``OTHER`` below). Test folders are not packages: pytest's default ``prepend`` import
mode and mypy both name a module by its file name alone, so two files with one name
in different folders would clash (pytest: "import file mismatch"; mypy: "Duplicate
module named"); this test names the clash before either does.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parent
PACKAGE = TESTS.parent / "trio_mcp"

#: Folders that test no single part of the package.
OTHER = {
    "support": "helpers shared by the other folders",
    "docs": "the docs' code blocks and the newcomer's walk through them",
    "examples": "the servers in examples/",
    "bench": "the loads bench/ counts",
    "fuzz": "byte-boundary Hypothesis over every transport",
}

#: Files directly in tests/: the fixtures every folder may use, and the checks of the
#: package as a whole. Beside them, ``test_<module>.py`` for a top-level module
#: (``trio_mcp/_<module>.py``) whose tests fit in one file.
TOP = {"conftest.py", "test_exports.py", "test_layers.py", "test_layout.py"}

#: Files that may share a name: pytest loads each conftest.py under its own name.
SHARED_NAMES = {"conftest.py"}


def python_files() -> list[Path]:
    return [
        path
        for path in TESTS.rglob("*.py")
        if "node_modules" not in path.parts and "__pycache__" not in path.parts
    ]


def part_named(folder: str) -> Path | None:
    """The part of the package a test folder is named after, if there is one."""
    for name in (f"_{folder}", folder):
        for candidate in (PACKAGE / name, PACKAGE / f"{name}.py"):
            if candidate.exists():
                return candidate
    return None


def test_every_folder_is_named_after_a_part_of_the_package() -> None:
    folders = sorted(
        p.name
        for p in TESTS.iterdir()
        if p.is_dir() and not p.name.startswith((".", "__"))
    )
    strays = [f for f in folders if f not in OTHER and part_named(f) is None]

    assert [] == strays, (
        "each folder under tests/ is named after the part of trio_mcp it tests (without "
        "the leading underscore); move these files there"
    )


def test_only_whole_package_checks_and_single_modules_sit_at_the_top() -> None:
    strays = [
        p.name
        for p in TESTS.glob("*.py")
        if p.name not in TOP
        and not (p.name.startswith("test_") and part_named(p.stem[5:]) is not None)
    ]

    assert [] == sorted(strays), (
        "directly in tests/ only the files in TOP and test_<module>.py for a module "
        "trio_mcp/_<module>.py; move these files to the folder of what they test"
    )


def test_every_file_name_is_unique() -> None:
    seen: dict[str, list[str]] = defaultdict(list)
    for path in python_files():
        if path.name not in SHARED_NAMES:
            seen[path.name].append(str(path.relative_to(TESTS)))
    clashes = {name: paths for name, paths in seen.items() if len(paths) > 1}

    assert {} == clashes, "rename one of each: pytest and mypy import them by name"


def test_no_file_shadows_a_standard_module() -> None:
    """A server script under tests/ runs with its own folder first on ``sys.path``
    (``python tests/support/wayout_server.py``), and the scale-out replicas get
    tests/support on ``PYTHONPATH``: a ``http.py`` there would stand in for the
    standard library's ``http`` in those processes."""
    shadowing = sorted(
        str(path.relative_to(TESTS))
        for path in python_files()
        if path.stem in sys.stdlib_module_names
    )

    assert [] == shadowing, "rename these: they hide a standard module of that name"

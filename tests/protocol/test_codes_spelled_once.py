"""Each error code and the "server busy" message are spelled once, in
``trio_mcp._protocol._wire``, and loopback is decided once, in ``trio_mcp._loopback``:
every other module imports them (issue 37 found -32000 defined three times and
"server busy" worded four ways, and two different sets of loopback host names)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from trio_mcp._protocol import _wire as wire

PACKAGE = Path(wire.__file__).resolve().parents[1]
SOURCES = {
    path.relative_to(PACKAGE.parent).as_posix(): path.read_text(encoding="utf-8")
    for path in sorted(PACKAGE.rglob("*.py"))
}
WIRE = "trio_mcp/_protocol/_wire.py"
LOOPBACK = "trio_mcp/_loopback.py"


def _numbers(source: str) -> set[int]:
    """The negative integer literals of a module (``-32000`` is ``USub(32000)``)."""
    return {
        -node.operand.value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) is int
    }


@pytest.mark.parametrize("code", [wire.SERVER_BUSY, wire.UNAUTHENTICATED, wire.REFUSED])
def test_an_error_code_is_written_only_in_wire(code: int) -> None:
    writers = sorted(name for name, text in SOURCES.items() if code in _numbers(text))

    assert [WIRE] == writers


def test_server_busy_is_worded_only_in_wire() -> None:
    writers = sorted(
        name
        for name, text in SOURCES.items()
        if re.search(r"""["']server busy: """, text)
    )

    assert [WIRE] == writers
    assert "server busy: 2 calls wait; retry later" == wire.busy_message("2 calls wait")


@pytest.mark.parametrize(
    "definition",
    [
        r"^LOOPBACK\w*\s*(:[^=]*)?=",
        r"^def is_loopback\w*\(",
        r"^def arrived_on_loopback\(",
    ],
)
def test_loopback_is_defined_only_in_its_module(definition: str) -> None:
    pattern = re.compile(definition, re.MULTILINE)
    writers = sorted(name for name, text in SOURCES.items() if pattern.search(text))

    assert [LOOPBACK] == writers

"""What the commands of ``trio-mcp`` share: the target and grant arguments, the
start-up line, and keeping stdout clean while user code runs."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator, Sequence
from typing import Any

from trio_mcp import Server

from .._serving import start_line

__all__ = [
    "add_allow",
    "add_legacy",
    "add_target",
    "catalog_entries",
    "stdout_to_stderr",
    "summary",
]


def add_target(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "target",
        help="module:attr or path/file.py:attr; attr is a Server, a factory or a "
        "lifespan (an async context manager function yielding a Server)",
    )


def add_allow(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="NAME",
        help="grant a capability to every caller (repeatable)",
    )


def catalog_entries(server: Server) -> list[tuple[str, str, dict[str, Any]]]:
    """Return ``(kind, name, wire entry)`` for each catalog entry, in order."""
    out = []
    for spec in server.catalog():
        wire: dict[str, Any] = dict(spec.to_wire())
        kind = type(spec).__name__.removesuffix("Spec").lower()
        name = wire.get("name") if kind != "resource" else None
        name = name or wire.get("uri") or wire.get("uriTemplate")
        out.append((kind, str(name), wire))
    return out


def summary(server: Server, where: str, allow: Sequence[str]) -> str:
    """Return the line printed to stderr when a server starts (the serve methods')."""
    return start_line(server, where, list(allow))


def add_legacy(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--legacy",
        action="store_true",
        help="also serve handshake-era clients (initialize; revisions 2025-03-26 to "
        "2025-11-25) beside 2026-07-28 ones",
    )


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """Keep the protocol stream clean while user code runs outside ``serve_stdio``.

    A lifespan or a module may print (or a C library write to fd 1) while it opens
    or closes; ``serve_stdio`` guards fd 1 only while it serves.
    """
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 1)
        os.close(saved)

"""``trio-mcp mcp``: the toolchain itself as an MCP server, built with trio_mcp.

An assistant can check a server's declarations, show its catalog and verify its
lock file through these tools, the same checks the command line runs.
"""

from __future__ import annotations

import json
from pathlib import Path

import attrs

from .._declare import tool
from .._errors import McpError, ToolError
from .._server import Server
from .._version import __version__
from ._load import LoadError, load_server
from ._lock import compare, lock_data

__all__ = ["toolchain_server"]


class ToolchainError(ToolError):
    """A target could not be loaded or checked."""


@attrs.frozen
class CatalogEntry:
    kind: str
    name: str
    description: str | None


def _load(target: str) -> Server:
    try:
        return load_server(target)
    except (LoadError, McpError) as exc:
        raise ToolchainError(str(exc)) from None


@tool(errors=(ToolchainError,))
def check_server(target: str) -> list[CatalogEntry]:
    """
    Validate a server's declarations and list its catalog.

    Args:
        target: The server to load, as 'package.module:attr' or 'path/file.py:attr'.
    """
    server = _load(target)
    out = []
    for spec in server.catalog():
        wire = spec.to_wire()
        name = wire.get("name")
        out.append(
            CatalogEntry(
                kind=type(spec).__name__.removesuffix("Spec").lower(),
                name=str(wire.get("uri", wire.get("uriTemplate", name))),
                description=wire.get("description"),  # type: ignore[arg-type]
            )
        )
    return out


@tool(errors=(ToolchainError,))
def check_lock(target: str, lock_file: str = "mcp.lock") -> list[str]:
    """
    Compare a server's catalog with its lock file; an empty list means unchanged.

    Args:
        target: The server to load, as 'package.module:attr' or 'path/file.py:attr'.
        lock_file: Path of the lock file written by 'trio-mcp lock'.
    """
    server = _load(target)
    path = Path(lock_file)
    if not path.is_file():
        raise ToolchainError(f"no lock file at {lock_file}; run 'trio-mcp lock' first")
    return compare(json.loads(path.read_text()), lock_data(server))


def toolchain_server() -> Server:
    """Return the server behind ``trio-mcp mcp``."""
    return Server(
        "trio-mcp-toolchain",
        __version__,
        tools=[check_server, check_lock],
        instructions="Checks trio_mcp servers: their declarations, catalog and lock file.",
    )

"""``trio-mcp mcp``: the toolchain itself as an MCP server, built with trio_mcp.

An assistant can check a server's declarations, show its catalog and verify its
lock file through these tools, the same checks the command line runs. Loading a
target imports and runs the code it names, so every tool that loads one requires
the ``load_code`` capability, which only the host grants (``--allow load_code``);
a tool's description or hints grant nothing.
"""

from __future__ import annotations

import json

import attrs
import trio

from trio_mcp import Capability, McpError, Server, ToolError, ToolHints, tool
from trio_mcp import __version__ as version

from ._commands import catalog_entries
from ._load import LoadError, open_server
from ._lock import compare, lock_data

__all__ = ["LOAD_CODE", "toolchain_server"]

LOAD_CODE = Capability(
    "load_code",
    description="Import and run the Python module or file a target names",
)


class ToolchainError(ToolError):
    """A target could not be loaded or checked."""


@attrs.frozen
class CatalogEntry:
    """One entry of a server's catalog."""

    kind: str
    name: str
    description: str | None


async def _catalog(target: str) -> list[CatalogEntry]:
    try:
        async with open_server(target) as server:
            return [
                CatalogEntry(kind, name, wire.get("description"))
                for kind, name, wire in catalog_entries(server)
            ]
    except (LoadError, McpError) as exc:
        raise ToolchainError(str(exc)) from None


@tool(caps=[LOAD_CODE], errors=(ToolchainError,), hints=ToolHints(read_only=True))
async def check_server(target: str) -> list[CatalogEntry]:
    """
    Validate a server's declarations and list its catalog.

    Args:
        target: The server to load, as 'package.module:attr' or 'path/file.py:attr'.
    """
    return await _catalog(target)


@tool(caps=[LOAD_CODE], errors=(ToolchainError,), hints=ToolHints(read_only=True))
async def check_lock(target: str, lock_file: str = "mcp.lock") -> list[str]:
    """
    Compare a server's catalog with its lock file; an empty list means unchanged.

    Args:
        target: The server to load, as 'package.module:attr' or 'path/file.py:attr'.
        lock_file: Path of the lock file written by 'trio-mcp lock'.
    """
    path = trio.Path(lock_file)
    if not await path.is_file():
        raise ToolchainError(f"no lock file at {lock_file}; run 'trio-mcp lock' first")
    try:
        async with open_server(target) as server:
            data = lock_data(server)
    except (LoadError, McpError) as exc:
        raise ToolchainError(str(exc)) from None
    return compare(json.loads(await path.read_text()), data)


def toolchain_server() -> Server:
    """Return the server behind ``trio-mcp mcp``."""
    return Server(
        "trio-mcp-toolchain",
        version,
        tools=[check_server, check_lock],
        instructions=(
            "Checks trio_mcp servers: their declarations, catalog and lock file. "
            "Loading a target runs its code, so the host must grant 'load_code'."
        ),
    )

"""``trio-mcp mcp``: the toolchain itself as an MCP server, built with trio_mcp.

An assistant can check a server's declarations, show its catalog and verify its
lock file through these tools, the same checks the command line runs. Loading a
target imports and runs the code it names, so every tool that loads one requires
the ``load_code`` capability, which only the host grants (``--allow load_code``);
a tool's description or hints grant nothing. With ``--skills FOLDER`` it also
serves a project's agent skills (SEP-2640).
"""

from __future__ import annotations

import json

import attrs
import trio

from trio_mcp import (
    Capability,
    McpError,
    PromptMessage,
    ResourceNotFound,
    Server,
    Skill,
    ToolError,
    ToolHints,
    prompt,
    resource,
    tool,
)
from trio_mcp import __version__ as version

from ._common import catalog_entries
from ._load import LoadError, open_server
from ._lock import compare, lock_data

__all__ = ["LOAD_CODE", "toolchain_server"]

LOAD_CODE = Capability(
    "load_code",
    description="Import and run the Python module or file a target names",
)


class ToolchainError(ToolError):
    """A target could not be loaded or checked."""


@attrs.frozen(eq=False)
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


@resource(uri="trio-mcp://help", ttl=3600)
def help_overview() -> str:
    """The trio-mcp command line: every command and what it does."""
    from . import parser

    return parser().format_help()


@resource(uri="trio-mcp://help/{command}", ttl=3600)
def help_command(command: str) -> str:
    """
    One trio-mcp command's options.

    Args:
        command: The command, such as 'install' or 'lock'.
    """
    from . import parser

    found = parser().command_parser(command)
    if found is None:
        raise ResourceNotFound(f"trio-mcp://help/{command}")
    return found.format_help()


@prompt(title="Write a trio_mcp tool")
def write_tool(purpose: str) -> list[PromptMessage]:
    """
    Ask for a trio_mcp tool that does something, written to pass 'trio-mcp check'.

    Args:
        purpose: What the tool should do.
    """
    return [
        PromptMessage.user(
            f"Write a trio_mcp tool that does this: {purpose}. Use '@tool' from "
            "trio_mcp on a typed function (attrs classes for structured values), "
            "write a docstring whose first paragraph describes the tool and an "
            "'Args:' entry for every parameter, raise a ToolError subclass for "
            "failures the model may act on, and declare caps= for anything that "
            "changes state. Then check it with the check_server tool."
        )
    ]


def toolchain_server(skills: str | None = None) -> Server:
    """Return the server behind ``trio-mcp mcp``.

    Args:
        skills: A folder of skill folders (a project's ``skills/``) to serve too.

    Raises:
        McpError.InvalidDeclaration: naming every problem of the skill folders.
    """
    return Server(
        "trio-mcp-toolchain",
        version,
        tools=[check_server, check_lock],
        resources=[help_overview, help_command],
        prompts=[write_tool],
        instructions=(
            "Checks trio_mcp servers: their declarations, catalog and lock file. "
            "Loading a target runs its code, so the host must grant 'load_code'."
        ),
        skills=[] if skills is None else Skill.all_in(skills),
    )

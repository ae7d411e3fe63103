"""The notes server of the OAuth guide (docs/guides/oauth.md), without its own auth.

Its two tools need a capability each; ``trio-mcp serve`` adds the bearer check from
the command line (``--auth-issuer``, ``--auth-audience``, ``--auth-scope``), which
maps each OAuth scope to one of these capabilities.
"""

from __future__ import annotations

from trio_mcp import Capability, Server, tool

READ = Capability("notes.read", description="Read the notes.")
WRITE = Capability("notes.write", description="Change the notes.")


@tool(caps=[READ])
def read_note(name: str) -> str:
    """Read a note.

    Args:
        name: The note's name.
    """
    return f"the note {name}"


@tool(caps=[WRITE])
def write_note(name: str, text: str) -> str:
    """Write a note.

    Args:
        name: The note's name.
        text: What it says.
    """
    return "written"


server = Server("notes", "1.0", tools=[read_note, write_note])

"""File notes: a resource server that shows the text files under one folder.

``notes://{+path}`` takes a path that may contain ``/`` (RFC 6570 reserved
expansion). trio_mcp refuses a ``..`` segment, an absolute path, a drive letter or a
NUL (however percent-encoded) before the handler runs; the handler
also resolves the path and refuses anything outside the folder (a symbolic link
pointing out, an absolute path), so a client can read notes and nothing else.
``NOTES_ROOT`` names the folder (default: ``notes`` in the current directory).

    trio-mcp run examples/file_notes.py
"""

from __future__ import annotations

import os
from pathlib import Path

import attrs

from trio_mcp import ResourceNotFound, Server, resource


@attrs.frozen
class NoteFolder:
    """The folder whose files are served."""

    root: Path

    def _inside(self, path: str) -> Path:
        """Return the file for ``path``, refusing anything outside the root."""
        root = self.root.resolve()
        candidate = (root / path).resolve()
        if not candidate.is_relative_to(root) or not candidate.is_file():
            raise ResourceNotFound(f"notes://{path}")
        return candidate

    @resource("notes://{+path}", mime_type="text/markdown")
    def read_note(self, path: str) -> str:
        """
        One note, by its path below the notes folder.

        Args:
            path: The note's path, such as 'projects/launch.md'.
        """
        return self._inside(path).read_text(encoding="utf-8")

    @resource("notes://index")
    def index(self) -> list[str]:
        """The paths of every note, sorted."""
        root = self.root.resolve()
        return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def make_server(root: Path) -> Server:
    """Return a server for the notes under ``root``."""
    folder = NoteFolder(root)
    return Server("file-notes", "1.0", resources=[folder.index, folder.read_note])


def server() -> Server:
    """The factory the command line calls: the folder from ``NOTES_ROOT``."""
    return make_server(Path(os.environ.get("NOTES_ROOT", "notes")))

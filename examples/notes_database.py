"""A lifespan: open a database before the first request and close it after the last.

``trio-mcp run examples/notes_database.py:lifespan`` enters ``lifespan()``, serves
the Server it yields, and leaves it when stdin closes, so the connection is opened
once and closed cleanly. ``NOTES_DB`` names the SQLite file (default ``notes.db``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import threading
from collections.abc import AsyncIterator

import attrs
import trio

from trio_mcp import Server, ToolHints, tool

log = logging.getLogger("notes_database")


@attrs.define
class Notes:
    """Notes kept in SQLite; sync tools run in worker threads, so one lock guards it."""

    db: sqlite3.Connection
    lock: threading.Lock = attrs.field(factory=threading.Lock)

    @tool
    def add_note(self, text: str) -> int:
        """
        Store a note and return its number.

        Args:
            text: The note.
        """
        with self.lock, self.db:
            cursor = self.db.execute("INSERT INTO notes (text) VALUES (?)", (text,))
        return int(cursor.lastrowid or 0)

    @tool(hints=ToolHints(read_only=True))
    def count_notes(self) -> int:
        """Count the stored notes."""
        with self.lock:
            (count,) = self.db.execute("SELECT count(*) FROM notes").fetchone()
        return int(count)


def _connect(path: str) -> sqlite3.Connection:
    db = sqlite3.connect(path, check_same_thread=False)
    db.execute("CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, text TEXT)")
    return db


@contextlib.asynccontextmanager
async def lifespan() -> AsyncIterator[Server]:
    """Open the database, yield the server, close the database."""
    path = os.environ.get("NOTES_DB", "notes.db")
    db = await trio.to_thread.run_sync(_connect, path)
    log.info("opened %s", path)
    try:
        notes = Notes(db)
        yield Server("notes", "1.0", tools=[notes.add_note, notes.count_notes])
    finally:
        db.close()
        log.info("closed %s", path)

"""``Skill``: a folder to serve as an agent skill, and the resource each file becomes.

``Skill.from_directory(path)`` only records where the folder is; the ``Server`` reads
and checks it (``_load``) when it is built, with every other declaration. Each file
is then an ordinary resource (``skill://<name>/<path>``), read through the same
``resources/read`` call path as any other: receipts, grants and middleware apply.

A file is read again from disk on every ``resources/read``, in a worker thread, and
served only if its bytes are still the ones the manifest describes (same size and
SHA-256): a file changed, replaced or removed since the server was built is refused
with -32603 and a message saying to restart the server, which then serves (and
lists the digests of) the new content. A reply is never a mix of old and new.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import attrs
import trio

from .._checks import invalid
from .._declare import (
    BlobResourceContents,
    ResourceRead,
    ResourceReply,
    ResourceSpec,
    TextResourceContents,
)
from .._declare._base import worker_threads
from .._dispatch._request import Failure
from .._errors import InvalidDeclaration
from .._protocol import _wire as wire
from ._load import SKILL_MD, LoadedSkill, SkillFile, digest_of, read_at_most

__all__ = ["FILE_TTL_SECONDS", "Skill", "SkillResource"]

log = logging.getLogger("trio_mcp")

#: How long a host may cache a skill file: its bytes cannot change while the server
#: runs (a changed file is refused, not served).
FILE_TTL_SECONDS = 3600.0


@attrs.frozen
class Skill:
    """An agent skill to serve (SEP-2640): a folder with a ``SKILL.md`` and its files.

    List it in ``Server(..., skills=[...])``. The server reads and checks the folder
    when it is built; a broken rule is an ``McpError.InvalidDeclaration`` naming the
    file and the rule.

    .. versionadded:: 0.3
    """

    path: Path
    """The folder, as an absolute path."""

    @classmethod
    def from_directory(cls, path: str | os.PathLike[str]) -> Skill:
        """The skill in the folder at ``path`` (its name is the folder's name).

        The folder is read and checked when the ``Server`` is built.

        Raises:
            McpError.InvalidArgument: if ``path`` is not a path (a str or an
                ``os.PathLike``); also a ``TypeError``, what this raised before.
        """
        try:
            given: object = os.fspath(path)
        except TypeError:
            given = None
        if not isinstance(given, str) or not given:
            raise invalid(
                "Skill.from_directory(path)",
                "the path of a skill's folder (a non-empty str or a pathlib.Path)",
                path,
            )
        return cls(Path(os.path.abspath(path)))

    @classmethod
    def all_in(cls, folder: str | os.PathLike[str]) -> list[Skill]:
        """Every skill of a folder of skills: each subfolder, in name order.

        Subfolders whose name starts with ``.`` are skipped.

        Raises:
            McpError.InvalidDeclaration: if ``folder`` is not a folder.
        """
        parent = Path(os.path.abspath(folder))
        if not parent.is_dir():
            raise InvalidDeclaration(
                f"{parent}: is not a folder; Skill.all_in() takes a folder whose "
                "subfolders are skills"
            )
        return [
            cls(child)
            for child in sorted(parent.iterdir())
            if child.is_dir() and not child.name.startswith(".")
        ]


@attrs.frozen(eq=False)
class SkillResource:
    """One file of a served skill, as a ``Resource`` adopter."""

    skill: LoadedSkill
    file: SkillFile
    declaration: str = attrs.field(init=False)

    @declaration.default
    def _declaration(self) -> str:
        return f"skill {self.skill.name} ({self.file.disk})"

    def spec(self) -> ResourceSpec:
        """``SKILL.md`` carries the frontmatter's name and description (SEP-2640)."""
        file = self.file
        if file.path == SKILL_MD:
            name = str(self.skill.frontmatter["name"])
            description = str(self.skill.frontmatter["description"])
        else:
            name = file.path.rsplit("/", 1)[-1]
            description = f"{file.path} of the {self.skill.name} skill"
        return ResourceSpec(
            uri=file.uri,
            name=name,
            description=description,
            mime_type=file.mime_type,
            ttl=FILE_TTL_SECONDS,
        )

    async def dispatch(self, read: ResourceRead) -> ResourceReply:
        """The file's bytes, if they are still those of the manifest.

        Raises:
            Failure: -32603 if the file changed on disk since the server was built.
        """
        file = self.file
        data = await trio.to_thread.run_sync(
            read_at_most, file.disk, file.size + 1, limiter=worker_threads()
        )
        if data is None or len(data) != file.size or digest_of(data) != file.digest:
            raise _changed(file)
        if file.is_text:
            text = data.decode("utf-8")
            return ResourceReply([TextResourceContents(file.uri, text, file.mime_type)])
        return ResourceReply([BlobResourceContents(file.uri, data, file.mime_type)])


def _changed(file: SkillFile) -> Failure:
    message = (
        f"skill file {file.uri} changed on disk since the server started, so it no "
        "longer matches its manifest digest; restart the server to serve the new "
        "content"
    )
    log.warning("%s (%s)", message, file.disk)
    return Failure(wire.INTERNAL_ERROR, message, {"uri": file.uri}, outcome="internal")

"""A skill folder read once, when the server is built: its files, digests and rules.

SEP-2640 (and the Agent Skills specification it delegates the format to) says what
a skill is; every rule below is checked here, before any message is read, and a
broken one is a problem naming the file and the rule (``rule: name-format``):

* ``folder``: the path is a folder.
* ``skill-md-required``: it holds a ``SKILL.md``, UTF-8, beginning with YAML
  frontmatter (``frontmatter``) that names the skill (``name-required``) and says
  what it does (``description``: 1-1024 characters).
* ``name-format``: the name is 1-64 lowercase letters, digits and hyphens, with no
  hyphen first, last or doubled; ``name-matches-folder``: it is the folder's name.
* ``reserved-metadata``: no ``metadata`` key under ``io.modelcontextprotocol/``.
* ``inside-folder``: no file is reached outside the folder, through a symbolic link
  (with ``..`` or an absolute target) or a linked folder; ``regular-files``: no
  FIFO, socket or device (reading one could block); ``utf8-names``: every name is
  UTF-8, so it has a URI.
* ``max-resources``: at most 512 files; ``max-total-bytes``: at most 16 MiB in all
  (the SEP's per-skill limits, which every host accepts).

Names starting with ``.`` (``.git``, ``.DS_Store``) are not part of the skill: they
are neither listed nor served. Each file's SHA-256 and size are computed here, once.
"""

from __future__ import annotations

import errno
import functools
import hashlib
import os
import re
import stat
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from .._json import JsonObject
from .._units import MiB
from ._frontmatter import BadFrontmatter, parse_frontmatter, split_frontmatter

if TYPE_CHECKING:
    import mimetypes

__all__ = [
    "MAX_RESOURCES",
    "MAX_TOTAL_BYTES",
    "SKILL_MD",
    "LoadedSkill",
    "SkillFile",
    "load_skill",
    "read_at_most",
]

SKILL_MD = "SKILL.md"
#: SEP-2640's per-skill limits: entries of ``resources`` (SKILL.md included), bytes.
MAX_RESOURCES = 512
MAX_TOTAL_BYTES = 16 * MiB
MAX_DESCRIPTION = 1024
#: The Agent Skills naming rule, as the conformance suite checks it.
_NAME = re.compile(r"^(?!.*--)[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$")
_RESERVED_METADATA = "io.modelcontextprotocol/"
#: The types a skill folder mostly holds, beyond Python's own table.
_SKILL_TYPES = {
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
    ".toml": "application/toml",
}


@functools.cache
def _mime_types() -> mimetypes.MimeTypes:
    """Python's own table only (``/etc/mime.types`` differs between machines), plus
    ``_SKILL_TYPES``; built by the first skill loaded, not by ``import trio_mcp``
    (``MimeTypes()`` first reads every system table it knows of)."""
    import mimetypes

    table = mimetypes.MimeTypes()
    for suffix, type_ in _SKILL_TYPES.items():
        table.add_type(type_, suffix)
    return table


@attrs.frozen(eq=False)
class SkillFile:
    """One served file: where it is, its URI, and what the manifest says of it."""

    path: str
    """Its path within the skill folder, ``/``-separated."""
    uri: str
    disk: str
    """The real path it is read from."""
    size: int
    digest: str
    """``sha256:`` and 64 lowercase hex digits, of the bytes read at build time."""
    mime_type: str
    is_text: bool
    """Whether its bytes are UTF-8 (served as text; otherwise as a base64 blob)."""


@attrs.frozen(eq=False)
class LoadedSkill:
    """A checked skill folder: its entry's parts and its tree."""

    name: str
    uri: str
    """The URI of its ``SKILL.md``."""
    frontmatter: JsonObject
    files: tuple[SkillFile, ...]
    """``SKILL.md`` first, then the others by path."""
    folders: tuple[str, ...]
    """Its folders' paths within it, the root (``""``) first."""

    @property
    def root_uri(self) -> str:
        """The skill's root directory resource (``skill://name``)."""
        return f"skill://{self.name}"


def skill_uri(name: str, path: str) -> str:
    """The URI of ``path`` in skill ``name``: each segment percent-encoded."""
    if not path:
        return f"skill://{name}"
    segments = (urllib.parse.quote(s, safe="") for s in path.split("/"))
    return f"skill://{name}/{'/'.join(segments)}"


def load_skill(folder: Path) -> tuple[LoadedSkill | None, list[str]]:
    """Read and check one skill folder; return it, or the problems found.

    ``SKILL.md``'s frontmatter is parsed from the very bytes its digest covers.
    """
    if not folder.is_dir():
        return None, [f"{folder}: is not a folder (rule: folder)"]
    problems: list[str] = []
    found, folders = _walk(folder, problems)
    files, skill_md = _digest(folder, found, problems)
    frontmatter = None
    if skill_md is None:
        problems.append(
            f"{folder / SKILL_MD}: not found; every skill needs a SKILL.md at the "
            "root of its folder (rule: skill-md-required)"
        )
    else:
        frontmatter = _read_frontmatter(folder, skill_md, problems)
    if problems or frontmatter is None:
        return None, problems
    name = folder.name
    skill = LoadedSkill(name, skill_uri(name, SKILL_MD), frontmatter, files, folders)
    return skill, []


def _read_frontmatter(
    folder: Path, data: bytes, problems: list[str]
) -> JsonObject | None:
    """The frontmatter, if it parses and follows the rules; else None."""
    where = folder / SKILL_MD
    try:
        frontmatter = parse_frontmatter(split_frontmatter(data.decode("utf-8")))
    except UnicodeDecodeError:
        problems.append(f"{where}: is not UTF-8 text (rule: frontmatter)")
        return None
    except BadFrontmatter as exc:
        problems.append(f"{where}: {exc} (rule: frontmatter)")
        return None
    found = _frontmatter_problems(frontmatter, folder.name)
    problems.extend(f"{where}: {p}" for p in found)
    return None if found else frontmatter


def _frontmatter_problems(frontmatter: JsonObject, folder_name: str) -> list[str]:
    found: list[str] = []
    name = frontmatter.get("name")
    if name is not None and not isinstance(name, str):
        found.append(
            f"the name {name!r} is not a string; quote it (rule: name-required)"
        )
    elif not name:
        found.append("the frontmatter has no 'name' (rule: name-required)")
    elif not _NAME.match(name):
        found.append(
            f"the name {name!r} breaks the Agent Skills naming rule: 1-64 lowercase "
            "letters, digits and hyphens, no hyphen first, last or twice in a row "
            "(rule: name-format)"
        )
    elif name != folder_name:
        found.append(
            f"the name {name!r} is not the folder's name {folder_name!r}; rename one "
            "(rule: name-matches-folder)"
        )
    description = frontmatter.get("description")
    if not isinstance(description, str) or not description.strip():
        found.append(
            "the frontmatter has no 'description' (a string saying what the skill "
            "does and when to use it) (rule: description)"
        )
    elif len(description) > MAX_DESCRIPTION:
        found.append(
            f"the description has {len(description)} characters; at most "
            f"{MAX_DESCRIPTION} (rule: description)"
        )
    metadata = frontmatter.get("metadata")
    if isinstance(metadata, dict):
        found.extend(
            f"metadata key {key!r}: keys under '{_RESERVED_METADATA}' are reserved "
            "for MCP extensions, and none is defined (rule: reserved-metadata)"
            for key in metadata
            if key.startswith(_RESERVED_METADATA)
        )
    return found


def _walk(
    folder: Path, problems: list[str]
) -> tuple[list[tuple[str, str]], tuple[str, ...]]:
    """The files to serve (path within, real path) and the folders, in name order.

    Stops listing past ``MAX_RESOURCES`` files, so a huge tree is not walked whole.
    """
    root = os.path.realpath(folder)
    files: list[tuple[str, str]] = []
    folders = [""]
    pending = [""]
    while pending:
        within = pending.pop()
        for entry, path in _children(root, within):
            where = folder / path
            if not _is_utf8(entry.name):
                problems.append(
                    f"{os.fsencode(where)!r}: the name is not UTF-8, so it has no URI; "
                    "rename it (rule: utf8-names)"
                )
            elif entry.is_symlink():
                _linked(root, entry.path, where, path, files, problems)
            elif entry.is_dir(follow_symlinks=False):
                folders.append(path)
                pending.append(path)
            elif entry.is_file(follow_symlinks=False):
                files.append((path, entry.path))
            else:
                problems.append(
                    f"{where}: is not a regular file (a FIFO, socket or device); "
                    "remove it (rule: regular-files)"
                )
            if len(files) > MAX_RESOURCES:
                problems.append(
                    f"{folder}: has more than {MAX_RESOURCES} files; a skill may have "
                    f"at most {MAX_RESOURCES}, SKILL.md included (rule: max-resources)"
                )
                return files, tuple(sorted(folders))
    return files, tuple(sorted(folders))


def _children(root: str, within: str) -> Iterator[tuple[os.DirEntry[str], str]]:
    with os.scandir(os.path.join(root, within)) as listing:
        entries = sorted(listing, key=lambda e: e.name)
    for entry in entries:
        if not entry.name.startswith("."):
            yield entry, f"{within}/{entry.name}" if within else entry.name


def _linked(
    root: str,
    link: str,
    where: Path,
    path: str,
    files: list[tuple[str, str]],
    problems: list[str],
) -> None:
    """A symbolic link: served as the file it names, if that is inside the folder."""
    target = os.path.realpath(link)
    if os.path.commonpath([root, target]) != root:
        problems.append(
            f"{where}: links to {target}, outside the skill folder; copy the file "
            "in instead (rule: inside-folder)"
        )
    elif os.path.isdir(target):
        problems.append(
            f"{where}: links to a folder; link its files, or move the folder here "
            "(rule: inside-folder)"
        )
    elif not os.path.isfile(target):
        problems.append(
            f"{where}: links to {target}, which is not a regular file "
            "(rule: regular-files)"
        )
    else:
        files.append((path, target))


def _digest(
    folder: Path, found: list[tuple[str, str]], problems: list[str]
) -> tuple[tuple[SkillFile, ...], bytes | None]:
    """Each file's size and SHA-256 (``SKILL.md`` first), and ``SKILL.md``'s bytes.

    Never reads more than one byte past the limit, however large a file is.
    """
    ordered = sorted(found, key=lambda f: (f[0] != SKILL_MD, f[0]))
    files: list[SkillFile] = []
    skill_md = None
    total = 0
    for path, disk in ordered:
        data = read_at_most(disk, MAX_TOTAL_BYTES - total + 1)
        if data is None:
            problems.append(
                f"{folder / path}: could not be read (gone, unreadable, or not a "
                "regular file) (rule: regular-files)"
            )
            continue
        total += len(data)
        if total > MAX_TOTAL_BYTES:
            problems.append(
                f"{folder}: its files hold more than {MAX_TOTAL_BYTES} bytes (16 MiB); "
                "a skill may hold at most that in all (rule: max-total-bytes)"
            )
            break
        if path == SKILL_MD:
            skill_md = data
        files.append(_file(folder.name, path, disk, data))
    return tuple(files), skill_md


def _file(name: str, path: str, disk: str, data: bytes) -> SkillFile:
    try:
        data.decode("utf-8")
        is_text = True
    except UnicodeDecodeError:
        is_text = False
    if path == SKILL_MD:
        mime = "text/markdown"
    else:
        guessed = _mime_types().guess_type(path, strict=False)[0]
        mime = guessed or ("text/plain" if is_text else "application/octet-stream")
    return SkillFile(
        path=path,
        uri=skill_uri(name, path),
        disk=disk,
        size=len(data),
        digest=digest_of(data),
        mime_type=mime,
        is_text=is_text,
    )


def read_at_most(disk: str, limit: int) -> bytes | None:
    """Up to ``limit`` bytes of the regular file at ``disk``; None if it is gone.

    The last component is not followed if it became a symbolic link, and a file
    that became a FIFO is not waited on (``O_NONBLOCK``).
    """
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(disk, flags)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ELOOP, errno.ENOTDIR, errno.EACCES):
            return None
        raise
    with open(fd, "rb") as stream:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return stream.read(limit)


def digest_of(data: bytes) -> str:
    """SEP-2640's digest format: ``sha256:`` and 64 lowercase hex digits."""
    return f"sha256:{hashlib.sha256(data).hexdigest()}"


def _is_utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True

"""The skills a server serves, and the extension's three methods (SEP-2640).

``skills/list`` pages through one entry per skill (``uri``, the frontmatter as
JSON, the complete manifest of ``{uri, digest, size}``); ``skills/get`` answers
one of them by its ``SKILL.md`` URI; ``resources/directory/read`` lists a skill
folder's direct children, subfolders as ``inode/directory``. Everything is built
once, with the server: the answers cannot change while it runs.

URIs are looked up exactly, never parsed into paths: ``skill://x/a/../b``,
``skill://x/a%2Fb`` and ``skill://x/%2E%2E/y`` name nothing served, so they are
-32602 like any other unknown URI.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Sequence

from .._dispatch._pages import InvalidCursor, Pages
from .._dispatch._request import Caller, Checked, Failure, Reply
from .._errors import InvalidDeclaration
from .._json import JsonObject, JsonValue
from .._protocol._wire import SKILLS_EXTENSION
from ._load import LoadedSkill, load_skill, skill_uri
from ._skill import Skill, SkillResource

__all__ = ["DIRECTORY_MIME_TYPE", "SKILLS_EXTENSION", "SkillSet"]

DIRECTORY_MIME_TYPE = "inode/directory"
#: A skill entry lists up to 512 files, so pages hold fewer entries than others.
SKILLS_PAGE_SIZE = 20
#: Entries are fixed while the server runs, like the catalog's lists.
SKILLS_TTL_MS = 3_600_000

#: A method of the extension, as the dispatcher's table holds them.
Handler = Callable[[Checked], Awaitable["JsonObject | Reply"]]


class SkillSet:
    """Checked skills, their entries, folders and file resources.

    Raises:
        InvalidDeclaration: listing every problem of every skill folder.
    """

    def __init__(self, skills: Sequence[object]) -> None:
        loaded = _load_all(skills)
        self.skills = loaded
        self.resources = [SkillResource(s, f) for s in loaded for f in s.files]
        """Every file, as a resource for the catalog."""
        self.entries = {s.uri: _entry(s) for s in loaded}
        """Each skill's entry, by the URI of its ``SKILL.md``."""
        self.pages = Pages(
            "skills", "skills", list(self.entries.values()), SKILLS_PAGE_SIZE
        )
        self.folders = {
            uri: Pages(f"dir{n}", "resources", children)
            for n, (uri, children) in enumerate(
                _folders(loaded, self.resources).items()
            )
        }
        """Each folder's direct children, by the folder's URI."""
        self.files = {r.file.uri for r in self.resources}
        self._cache_scope: Callable[[Caller], str] = lambda caller: "private"
        self._encode_result: Callable[[str | int, JsonObject], bytes] = _unbound

    def __bool__(self) -> bool:
        return bool(self.skills)

    def capability(self) -> JsonObject:
        """The extension's settings in ``capabilities.extensions``."""
        return {"directoryRead": True}

    def methods(
        self,
        cache_scope: Callable[[Caller], str],
        encode_result: Callable[[str | int, JsonObject], bytes],
    ) -> dict[str, Handler]:
        """The extension's methods, for the dispatcher's table.

        Args:
            cache_scope: The ``cacheScope`` of a reply to a caller (the dispatcher's,
                so skills are private exactly when the lists are).
            encode_result: Encodes a response around a result (the dispatcher's);
                pages of entries are encoded once and spliced in, as the lists' are.
        """
        self._cache_scope = cache_scope
        self._encode_result = encode_result
        return {
            "skills/list": self._list,
            "skills/get": self._get,
            "resources/directory/read": self._read_directory,
        }

    async def _list(self, request: Checked) -> Reply:
        return self._page(self.pages, request, cacheable=True)

    async def _get(self, request: Checked) -> JsonObject:
        uri = _uri(request, "skills/get")
        entry = self.entries.get(uri)
        if entry is None:
            raise Failure.invalid(
                f"no skill is served at {uri}; skills/list lists the skills served here",
                {"uri": uri},
            )
        return {
            "skill": entry,
            "ttlMs": SKILLS_TTL_MS,
            "cacheScope": self._cache_scope(request.caller),
        }

    async def _read_directory(self, request: Checked) -> Reply:
        uri = _uri(request, "resources/directory/read")
        pages = self.folders.get(uri)
        if pages is None:
            what = (
                "is a file, not a directory resource; read it with resources/read"
                if uri in self.files
                else "is not a directory resource served here"
            )
            raise Failure.invalid(f"{uri} {what}", {"uri": uri})
        return self._page(pages, request, cacheable=False)

    def _page(self, pages: Pages, request: Checked, *, cacheable: bool) -> Reply:
        """One page of ``pages``: its items encoded once, spliced into the reply."""
        try:
            result, offset = pages.result(request.params)
        except InvalidCursor as exc:
            raise Failure.invalid(f"invalid cursor: {exc}") from None
        if cacheable:
            result["ttlMs"] = SKILLS_TTL_MS
            result["cacheScope"] = self._cache_scope(request.caller)
        return Reply(pages.splice(self._encode_result(request.id, result), offset))


def _load_all(skills: Sequence[object]) -> list[LoadedSkill]:
    """Read and check every folder; raise with every problem of every one."""
    if isinstance(skills, str | bytes | os.PathLike):
        raise InvalidDeclaration(
            f"skills= takes a list of Skill values, got the path {skills!r}; "
            "use Skill.all_in(path) for a folder of skills"
        )
    problems: list[str] = []
    loaded: list[LoadedSkill] = []
    for skill in skills:
        if not isinstance(skill, Skill):
            problems.append(
                f"skills= takes Skill values (Skill.from_directory(path)), got {skill!r}"
            )
            continue
        found, found_problems = load_skill(skill.path)
        problems.extend(found_problems)
        if found is not None:
            loaded.append(found)
    problems.extend(_same_names(loaded))
    if problems:
        raise InvalidDeclaration(problems)
    return loaded


def _entry(skill: LoadedSkill) -> JsonObject:
    resources: list[JsonValue] = [
        {"uri": f.uri, "digest": f.digest, "size": f.size} for f in skill.files
    ]
    return {"uri": skill.uri, "frontmatter": skill.frontmatter, "resources": resources}


def _folders(
    loaded: Sequence[LoadedSkill], resources: Sequence[SkillResource]
) -> dict[str, list[JsonObject]]:
    """Each folder's URI and its children's ``Resource`` objects, in name order."""
    children: dict[str, list[tuple[str, JsonObject]]] = {}
    for skill in loaded:
        for folder in skill.folders:
            children[skill_uri(skill.name, folder)] = []
        for folder in skill.folders[1:]:
            parent, _, name = folder.rpartition("/")
            children[skill_uri(skill.name, parent)].append(
                (
                    name,
                    {
                        "uri": skill_uri(skill.name, folder),
                        "name": name,
                        "mimeType": DIRECTORY_MIME_TYPE,
                    },
                )
            )
    for resource in resources:
        parent = resource.file.path.rpartition("/")[0]
        wire = resource.spec().to_wire()
        name = resource.file.path.rpartition("/")[2]
        children[skill_uri(resource.skill.name, parent)].append((name, wire))
    return {
        uri: [item for _, item in sorted(items, key=lambda pair: pair[0])]
        for uri, items in children.items()
    }


def _same_names(loaded: Sequence[LoadedSkill]) -> list[str]:
    seen: dict[str, LoadedSkill] = {}
    found: list[str] = []
    for skill in loaded:
        if skill.name in seen:
            found.append(
                f"two skills are named {skill.name!r}; both would be served at "
                f"{skill.uri} (rule: unique-names)"
            )
        seen[skill.name] = skill
    return found


def _uri(request: Checked, method: str) -> str:
    uri = request.params.get("uri")
    if not isinstance(uri, str):
        raise Failure.invalid(f"{method} needs params.uri (a string)")
    return uri


def _unbound(request_id: str | int, result: JsonObject) -> bytes:
    raise RuntimeError("SkillSet.methods() was not called by a dispatcher")

"""Skill folders written to disk for the tests, and a client walking them as a host would."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from support import wire

from trio_mcp.testing import McpTestClient

__all__ = [
    "content_bytes",
    "list_skills",
    "read_one",
    "request",
    "sha256",
    "skill_md",
    "write_skill",
    "write_tree",
]


def skill_md(
    name: str, description: str = "Does one thing well.", extra: str = ""
) -> str:
    """A ``SKILL.md`` with the given frontmatter and a short body."""
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n\n# {name}\n"


def write_tree(root: Path, files: Mapping[str, bytes | str]) -> Path:
    """Write ``files`` (relative path -> content) under ``root``; return ``root``."""
    for path, content in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        data = content.encode() if isinstance(content, str) else content
        target.write_bytes(data)
    return root


def write_skill(
    parent: Path, name: str, files: Mapping[str, bytes | str] | None = None
) -> Path:
    """A valid skill folder ``parent/name`` with ``files`` beside its SKILL.md."""
    return write_tree(parent / name, {"SKILL.md": skill_md(name), **(files or {})})


async def list_skills(client: McpTestClient) -> list[dict[str, Any]]:
    """Every entry of every page of ``skills/list``."""
    entries: list[dict[str, Any]] = []
    params: dict[str, object] = {}
    while True:
        result = await client.request("skills/list", params)
        entries.extend(wire(result)["skills"])
        if "nextCursor" not in result:
            return entries
        params = {"cursor": result["nextCursor"]}


async def request(
    client: McpTestClient, method: str, params: dict[str, object] | None = None
) -> Any:
    """A request's result, for free indexing in asserts."""
    return wire(await client.request(method, params))


async def read_one(client: McpTestClient, uri: str) -> dict[str, Any]:
    """The one ``contents`` item ``resources/read`` returns for ``uri``."""
    [contents] = wire(await client.read_resource(uri))["contents"]
    return dict(contents)


def content_bytes(contents: dict[str, Any]) -> bytes:
    """The raw bytes a ``resources/read`` content carries (text as UTF-8)."""
    if "text" in contents:
        return str(contents["text"]).encode("utf-8")
    return base64.b64decode(contents["blob"])


def sha256(data: bytes) -> str:
    """SEP-2640's digest format."""
    return f"sha256:{hashlib.sha256(data).hexdigest()}"

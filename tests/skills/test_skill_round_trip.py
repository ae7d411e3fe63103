"""Hypothesis at the boundaries: a tree of files on disk, and frontmatter text.

Whatever files a skill holds (any names, any bytes, text or not), every digest and
size ``skills/list`` gives is that of what ``resources/read`` returns for the same
URI, and walking ``resources/directory/read`` from the skill's root finds exactly
the listed files. Whatever YAML the frontmatter holds, what is accepted is what the
author wrote, read the same by YAML 1.1 and YAML 1.2 parsers.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from skill_trees import (
    content_bytes,
    list_skills,
    read_one,
    request,
    sha256,
    skill_md,
    write_tree,
)
from support.strategies import json_trees

from trio_mcp import Server, Skill
from trio_mcp._skills._frontmatter import BadFrontmatter, parse_frontmatter
from trio_mcp.testing import McpTestClient

#: File and folder names: any printable text but ``/``, NUL and a leading ``.``
#: (hidden, not served), short enough for any file system.
segment = st.text(
    st.characters(blacklist_categories=["Cs", "Cc"], blacklist_characters="/\\"),
    min_size=1,
    max_size=12,
).filter(lambda s: not s.startswith(".") and s.encode() and len(s.encode()) < 100)
paths = st.lists(segment, min_size=1, max_size=3).map("/".join)
contents = st.binary(max_size=300) | st.text(max_size=300).map(str.encode)
trees = st.dictionaries(paths, contents, max_size=8).filter(
    lambda tree: (
        not any(  # a file cannot also be a folder
            p != q and q.startswith(f"{p}/") for p in tree for q in tree
        )
        # SKILL.md is written by the test: no generated file or folder takes its name
        and not any(p.split("/")[0] == "SKILL.md" for p in tree)
    )
)


async def walk(client: McpTestClient, uri: str) -> set[str]:
    """Every file under the directory ``uri``, through ``resources/directory/read``."""
    found: set[str] = set()
    result = await request(client, "resources/directory/read", {"uri": uri})
    for child in result["resources"]:
        if child["mimeType"] == "inode/directory":
            found |= await walk(client, str(child["uri"]))
        else:
            found.add(str(child["uri"]))
    return found


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(tree=trees)
async def test_every_listed_digest_is_that_of_what_is_read(
    tree: dict[str, bytes],
) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        folder = write_tree(
            Path(scratch) / "tree", {"SKILL.md": skill_md("tree"), **tree}
        )
        server = Server("s", "1", skills=[Skill.from_directory(folder)])
        async with McpTestClient(server) as client:
            [entry] = await list_skills(client)
            listed = entry["resources"]
            assert len(tree) + 1 == len(listed)
            for item in listed:
                data = content_bytes(await read_one(client, item["uri"]))
                assert (item["digest"], item["size"]) == (sha256(data), len(data))
            assert {i["uri"] for i in listed} == await walk(client, "skill://tree")


json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
json_values = json_trees(json_scalars)


@settings(max_examples=100, deadline=None)
@given(value=st.dictionaries(st.text(max_size=8), json_values, max_size=5))
def test_accepted_frontmatter_is_what_was_written(value: dict[str, Any]) -> None:
    for text in (yaml.safe_dump(value), yaml.safe_dump(value, default_flow_style=True)):
        try:
            parsed = parse_frontmatter(text)
        except BadFrontmatter:
            # Refused: a scalar or key YAML 1.2 reads otherwise (PyYAML writes for
            # YAML 1.1, so it leaves '1e3' and '0E0' unquoted). Never misread.
            continue
        assert value == parsed
        assert yaml.safe_load(text) == parsed  # what a YAML 1.1 host reads, too

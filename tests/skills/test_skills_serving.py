"""The skills extension (SEP-2640) through real JSON: McpTestClient validates every
message (core results against the 2026-07-28 schema, the extension's three results
against the shapes its specification defines)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import trio
from skill_trees import (
    content_bytes,
    list_skills,
    read_one,
    request,
    sha256,
    write_skill,
)

from trio_mcp import Server, Skill, resource
from trio_mcp.testing import McpTestClient, ProtocolError

EXTENSION = "io.modelcontextprotocol/skills"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "skills"


@resource(uri="notes://today")
def today() -> str:
    """Today's notes."""
    return "nothing yet"


def pdf_skill(parent: Path) -> Path:
    return write_skill(
        parent,
        "pdf-processing",
        {
            "references/FORMS.md": "# Forms\n",
            "templates/invoice.md": "Invoice {{number}}\n",
            "templates/regional/eu.md": "EU invoice\n",
            "scripts/logo.png": b"\x89PNG\r\n\x1a\n\x00\xff",
        },
    )


async def test_the_extension_is_advertised_only_with_skills(tmp_path: Path) -> None:
    async with McpTestClient(Server("plain", "1", resources=[today])) as client:
        caps = (await request(client, "server/discover"))["capabilities"]
        assert "extensions" not in caps
        with pytest.raises(ProtocolError) as raised:
            await client.request("skills/list")
        assert -32601 == raised.value.code
    server = Server("skills", "1", skills=[Skill.from_directory(pdf_skill(tmp_path))])
    async with McpTestClient(server) as client:
        caps = (await request(client, "server/discover"))["capabilities"]
        assert {EXTENSION: {"directoryRead": True}} == caps["extensions"]
        assert "resources" in caps


async def test_an_entry_is_the_frontmatter_and_a_complete_manifest(
    tmp_path: Path,
) -> None:
    folder = pdf_skill(tmp_path)
    async with McpTestClient(
        Server("s", "1", skills=[Skill.from_directory(folder)])
    ) as client:
        [entry] = await list_skills(client)
        assert "skill://pdf-processing/SKILL.md" == entry["uri"]
        assert {
            "name": "pdf-processing",
            "description": "Does one thing well.",
        } == entry["frontmatter"]
        expected = {
            f"skill://pdf-processing/{p}": (p, (folder / p).read_bytes())
            for p in (
                "SKILL.md",
                "references/FORMS.md",
                "scripts/logo.png",
                "templates/invoice.md",
                "templates/regional/eu.md",
            )
        }
        assert list(expected) == [r["uri"] for r in entry["resources"]]
        for listed in entry["resources"]:
            _, data = expected[listed["uri"]]
            assert (sha256(data), len(data)) == (listed["digest"], listed["size"])
        got = await client.request("skills/get", {"uri": entry["uri"]})
        assert entry == got["skill"]
        assert "nextCursor" not in got


async def test_skill_md_is_listed_with_its_frontmatter(tmp_path: Path) -> None:
    server = Server(
        "s", "1", resources=[today], skills=[Skill.from_directory(pdf_skill(tmp_path))]
    )
    async with McpTestClient(server) as client:
        listed = {r["uri"]: r for r in await client.list_resources()}
        assert {
            "uri": "skill://pdf-processing/SKILL.md",
            "name": "pdf-processing",
            "description": "Does one thing well.",
            "mimeType": "text/markdown",
        } == listed["skill://pdf-processing/SKILL.md"]
        assert "notes://today" in listed
        contents = await read_one(client, "skill://pdf-processing/SKILL.md")
        assert "text/markdown" == contents["mimeType"]
        blob = await read_one(client, "skill://pdf-processing/scripts/logo.png")
        assert ("image/png", b"\x89PNG\r\n\x1a\n\x00\xff") == (
            blob["mimeType"],
            content_bytes(blob),
        )


async def test_skills_list_pages_never_split_an_entry(tmp_path: Path) -> None:
    names = [f"skill-{n:02}" for n in range(45)]
    skills = [Skill.from_directory(write_skill(tmp_path, name)) for name in names]
    async with McpTestClient(Server("s", "1", skills=skills)) as client:
        first = await client.request("skills/list")
        assert "nextCursor" in first
        entries = await list_skills(client)
        assert names == [e["frontmatter"]["name"] for e in entries]
        with pytest.raises(ProtocolError) as raised:
            await client.request("skills/list", {"cursor": "not-one-of-ours"})
        assert -32602 == raised.value.code


async def test_skills_get_refuses_what_is_not_a_served_skill(tmp_path: Path) -> None:
    server = Server("s", "1", skills=[Skill.from_directory(pdf_skill(tmp_path))])
    async with McpTestClient(server) as client:
        for params in (
            {"uri": "skill://other/SKILL.md"},
            {"uri": "skill://pdf-processing/references/FORMS.md"},
            {"uri": "skill://pdf-processing"},
            {"uri": 7},
            {},
        ):
            with pytest.raises(ProtocolError) as raised:
                await client.request("skills/get", params)
            assert -32602 == raised.value.code, params


async def test_directories_list_their_direct_children(tmp_path: Path) -> None:
    folder = pdf_skill(tmp_path)
    (folder / "empty").mkdir()
    server = Server("s", "1", skills=[Skill.from_directory(folder)])
    async with McpTestClient(server) as client:

        async def children(uri: str) -> list[tuple[str, str]]:
            result = await request(client, "resources/directory/read", {"uri": uri})
            return [(r["uri"], r["mimeType"]) for r in result["resources"]]

        root = "skill://pdf-processing"
        assert [
            (f"{root}/SKILL.md", "text/markdown"),
            (f"{root}/empty", "inode/directory"),
            (f"{root}/references", "inode/directory"),
            (f"{root}/scripts", "inode/directory"),
            (f"{root}/templates", "inode/directory"),
        ] == await children(root)
        assert [
            (f"{root}/templates/invoice.md", "text/markdown"),
            (f"{root}/templates/regional", "inode/directory"),
        ] == await children(f"{root}/templates")
        assert [] == await children(f"{root}/empty")
        for uri in (f"{root}/SKILL.md", f"{root}/", f"{root}/nowhere", "skill://other"):
            with pytest.raises(ProtocolError) as raised:
                await children(uri)
            assert -32602 == raised.value.code, uri


@pytest.mark.parametrize(
    "uri",
    [
        "skill://pdf-processing/templates/../SKILL.md",
        "skill://pdf-processing/./SKILL.md",
        "skill://pdf-processing/templates%2Finvoice.md",
        "skill://pdf-processing/templates%2finvoice.md",
        "skill://pdf-processing/%2E%2E/outside.md",
        "skill://pdf-processing/templates/%2e%2e/SKILL.md",
        "skill://pdf-processing/..%2F..%2Foutside.md",
        "skill://pdf-processing//SKILL.md",
        "skill://pdf-processing/SKILL.md?x=1",
        "skill://PDF-processing/SKILL.md",
    ],
)
async def test_traversal_and_encoded_separators_name_nothing(
    tmp_path: Path, uri: str
) -> None:
    (tmp_path / "outside.md").write_text("secret")
    folder = pdf_skill(tmp_path / "skills")
    async with McpTestClient(
        Server("s", "1", skills=[Skill.from_directory(folder)])
    ) as client:
        for method in ("resources/read", "resources/directory/read", "skills/get"):
            with pytest.raises(ProtocolError) as raised:
                await client.request(method, {"uri": uri})
            assert -32602 == raised.value.code, (method, uri)


async def test_a_link_inside_the_folder_is_served_as_its_file(tmp_path: Path) -> None:
    folder = pdf_skill(tmp_path)
    os.symlink("references/FORMS.md", folder / "FORMS-link.md")
    async with McpTestClient(
        Server("s", "1", skills=[Skill.from_directory(folder)])
    ) as client:
        contents = await read_one(client, "skill://pdf-processing/FORMS-link.md")
        assert "# Forms\n" == contents["text"]


async def read_error(client: McpTestClient, uri: str) -> ProtocolError:
    with pytest.raises(ProtocolError) as raised:
        await client.read_resource(uri)
    return raised.value


async def test_a_file_changed_on_disk_is_refused_until_restart(tmp_path: Path) -> None:
    folder = pdf_skill(tmp_path)
    forms = folder / "references" / "FORMS.md"
    uri = "skill://pdf-processing/references/FORMS.md"
    async with McpTestClient(
        Server("s", "1", skills=[Skill.from_directory(folder)])
    ) as client:
        [before] = await list_skills(client)
        forms.write_text("# Forms, rewritten\n")
        error = await read_error(client, uri)
        assert -32603 == error.code
        assert "changed on disk" in error.message
        assert "restart the server" in error.message
        assert [before] == await list_skills(client)  # the build's digests
        forms.write_text("# Forms\n")  # the same bytes again: served again
        assert "# Forms\n" == (await read_one(client, uri))["text"]
        forms.unlink()
        assert -32603 == (await read_error(client, uri)).code
        os.symlink(folder / "SKILL.md", forms)  # swapped for a link: refused
        assert -32603 == (await read_error(client, uri)).code
    async with McpTestClient(
        Server("s", "1", skills=[Skill.from_directory(folder)])
    ) as client:
        [after] = await list_skills(client)
        assert before != after  # restarted: the new content and its digest


async def test_a_file_swapped_for_a_fifo_is_refused_without_waiting(
    tmp_path: Path,
) -> None:
    folder = pdf_skill(tmp_path)
    forms = folder / "references" / "FORMS.md"
    async with McpTestClient(
        Server("s", "1", skills=[Skill.from_directory(folder)])
    ) as client:
        forms.unlink()
        os.mkfifo(forms)
        with trio.fail_after(5):
            error = await read_error(
                client, "skill://pdf-processing/references/FORMS.md"
            )
        assert -32603 == error.code


async def test_skills_survive_a_catalog_replacement(tmp_path: Path) -> None:
    server = Server(
        "s", "1", skills=[Skill.from_directory(pdf_skill(tmp_path))], dynamic=True
    )
    async with McpTestClient(server) as client:
        server.replace(resources=[today])
        uris = {r["uri"] for r in await client.list_resources()}
        assert {"notes://today", "skill://pdf-processing/SKILL.md"} <= uris
        assert await list_skills(client)


async def test_the_example_skill_is_served_by_the_toolchain(tmp_path: Path) -> None:
    from trio_mcp._cli._toolchain import toolchain_server

    async with McpTestClient(toolchain_server(skills=str(EXAMPLES))) as client:
        entries = await list_skills(client)
        assert ["trio-mcp-tools"] == [e["frontmatter"]["name"] for e in entries]
        for listed in entries[0]["resources"]:
            contents = await read_one(client, listed["uri"])
            assert listed["digest"] == sha256(content_bytes(contents))
    copy = shutil.copytree(EXAMPLES, tmp_path / "skills")
    assert [Skill.from_directory(copy / "trio-mcp-tools")] == Skill.all_in(copy)


async def test_skill_reads_run_the_call_chain_and_leave_receipts(
    tmp_path: Path,
) -> None:
    from trio_mcp import Call, Ending, Next, Receipt

    seen: list[tuple[str, str, str]] = []
    receipts: list[Receipt] = []

    async def step(call: Call, next: Next) -> Ending:
        seen.append((call.method, call.name, call.spec.name))
        return await next(call)

    server = Server(
        "s",
        "1",
        skills=[Skill.from_directory(pdf_skill(tmp_path))],
        middleware=[step],
        receipts=receipts.append,
    )
    async with McpTestClient(server) as client:
        await client.read_resource("skill://pdf-processing/SKILL.md")
        await client.read_resource("skill://pdf-processing/templates/invoice.md")
    assert [
        ("resources/read", "skill://pdf-processing/SKILL.md", "pdf-processing"),
        ("resources/read", "skill://pdf-processing/templates/invoice.md", "invoice.md"),
    ] == seen
    assert ["ok", "ok"] == [r.outcome for r in receipts]

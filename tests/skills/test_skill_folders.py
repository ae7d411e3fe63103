"""Every broken skill folder is refused when the Server is built, naming the file and
the rule it breaks (``rule: ...``); nothing is served until it is fixed."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from skill_trees import skill_md, write_skill, write_tree

from trio_mcp import InvalidDeclaration, Server, Skill

MiB = 1024 * 1024


def refusal(*folders: Path) -> str:
    with pytest.raises(InvalidDeclaration) as raised:
        Server("s", "1", skills=[Skill.from_directory(f) for f in folders])
    return str(raised.value)


def alias_bomb(depth: int) -> str:
    """A billion-laughs frontmatter: each level an anchored list of nine aliases."""
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for n in range(1, depth + 1):
        lines.append(f"a{n}: &a{n} [{','.join([f'*a{n - 1}'] * 9)}]")
    return "\n".join(lines) + "\n"


def with_skill_md(text: str | bytes) -> Callable[[Path], Path]:
    def make(parent: Path) -> Path:
        return write_tree(parent / "good-name", {"SKILL.md": text})

    return make


def linked(target: Callable[[Path], str]) -> Callable[[Path], Path]:
    def make(parent: Path) -> Path:
        folder = write_skill(parent, "good-name")
        (parent / "outside.md").write_text("secret")
        (parent / "outside").mkdir()
        os.symlink(target(parent), folder / "link")
        return folder

    return make


def fifo(parent: Path) -> Path:
    folder = write_skill(parent, "good-name")
    os.mkfifo(folder / "pipe")
    return folder


def many_files(parent: Path) -> Path:
    return write_skill(parent, "good-name", {f"f/{n:03}.md": "x" for n in range(512)})


def large(parent: Path) -> Path:
    return write_skill(
        parent, "good-name", {"a.bin": b"\0" * (8 * MiB), "b.bin": b"\0" * (8 * MiB)}
    )


def huge(parent: Path) -> Path:
    """A sparse 64 GiB file: refused after reading one byte past the limit, not all."""
    folder = write_skill(parent, "good-name")
    with open(folder / "huge.bin", "wb") as stream:
        stream.truncate(64 * 1024 * MiB)
    return folder


def bad_file_name(parent: Path) -> Path:
    folder = write_skill(parent, "good-name")
    with open(os.path.join(os.fsencode(folder), b"\xff.md"), "wb") as stream:
        stream.write(b"x")
    return folder


Case = tuple[str, Callable[[Path], Path], str]


def bad_frontmatter(label: str, extra: str) -> Case:
    """A case: the good skill's frontmatter with ``extra`` lines, refused by the
    ``frontmatter`` rule."""
    return (label, with_skill_md(skill_md("good-name", extra=extra)), "frontmatter")


CASES: list[Case] = [
    ("no folder", lambda p: p / "missing", "folder"),
    (
        "no SKILL.md",
        lambda p: write_tree(p / "good-name", {"x.md": "x"}),
        "skill-md-required",
    ),
    ("no frontmatter", with_skill_md("# Just a title\n"), "frontmatter"),
    ("unclosed frontmatter", with_skill_md("---\nname: good-name\n"), "frontmatter"),
    ("not YAML", with_skill_md("---\nname: [unclosed\n---\n"), "frontmatter"),
    ("a list", with_skill_md("---\n- name\n---\n"), "frontmatter"),
    ("not UTF-8", with_skill_md(b"---\nname: \xff\n---\n"), "frontmatter"),
    bad_frontmatter("a YAML 1.1 boolean", "beta: yes\n"),
    bad_frontmatter("a date", "since: 2026-01-01\n"),
    bad_frontmatter("a duplicate key", "name: good-name\n"),
    bad_frontmatter("NaN", "x: .nan\n"),
    bad_frontmatter("an alias bomb", alias_bomb(9)),
    bad_frontmatter("an alias", "a: &x one\nb: *x\n"),
    bad_frontmatter("an anchor alone", "a: &x one\n"),
    bad_frontmatter("over 64 KiB of frontmatter", f"x: '{'y' * 65536}'\n"),
    bad_frontmatter("too many values", f"x: [{'1,' * 5000}1]\n"),
    bad_frontmatter("too deep", f"x: {'[' * 200}{']' * 200}\n"),
    ("no name", with_skill_md("---\ndescription: d\n---\n"), "name-required"),
    (
        "a number for a name",
        with_skill_md("---\nname: 12\ndescription: d\n---\n"),
        "name-required",
    ),
    ("upper case", with_skill_md(skill_md("Good-name")), "name-format"),
    ("a double hyphen", with_skill_md(skill_md("good--name")), "name-format"),
    ("a leading hyphen", with_skill_md(skill_md("-good-name")), "name-format"),
    ("65 characters", with_skill_md(skill_md("a" * 65)), "name-format"),
    (
        "another folder's name",
        with_skill_md(skill_md("other-name")),
        "name-matches-folder",
    ),
    ("no description", with_skill_md("---\nname: good-name\n---\n"), "description"),
    (
        "a blank description",
        with_skill_md(skill_md("good-name", "'  '")),
        "description",
    ),
    (
        "a long description",
        with_skill_md(skill_md("good-name", "x" * 1025)),
        "description",
    ),
    (
        "reserved metadata",
        with_skill_md(
            skill_md("good-name", extra="metadata:\n  io.modelcontextprotocol/x: y\n")
        ),
        "reserved-metadata",
    ),
    ("a link out with ..", linked(lambda p: "../outside.md"), "inside-folder"),
    ("an absolute link out", linked(lambda p: str(p / "outside.md")), "inside-folder"),
    ("a linked folder", linked(lambda p: "../outside"), "inside-folder"),
    ("a link to itself", linked(lambda p: "."), "inside-folder"),
    ("a dangling link", linked(lambda p: "nowhere.md"), "regular-files"),
    ("a FIFO", fifo, "regular-files"),
    ("513 files", many_files, "max-resources"),
    ("16 MiB and more", large, "max-total-bytes"),
    ("a sparse 64 GiB file", huge, "max-total-bytes"),
    ("a name that is not UTF-8", bad_file_name, "utf8-names"),
]


@pytest.mark.parametrize(("case", "make", "rule"), CASES, ids=[c[0] for c in CASES])
def test_a_broken_folder_is_refused_naming_its_rule(
    tmp_path: Path, case: str, make: Callable[[Path], Path], rule: str
) -> None:
    folder = make(tmp_path)
    message = refusal(folder)
    assert f"(rule: {rule})" in message
    assert str(folder) in message or os.fsdecode(os.fsencode(folder)) in message


def test_every_problem_of_every_folder_is_listed_at_once(tmp_path: Path) -> None:
    first = write_tree(tmp_path / "first", {"SKILL.md": skill_md("wrong")})
    second = write_tree(tmp_path / "second", {"x.md": "x"})
    message = refusal(first, second)
    assert "(rule: name-matches-folder)" in message
    assert "(rule: skill-md-required)" in message


def test_two_skills_of_one_name_are_refused(tmp_path: Path) -> None:
    one = write_skill(tmp_path / "a", "same")
    two = write_skill(tmp_path / "b", "same")
    assert "(rule: unique-names)" in refusal(one, two)


def test_a_skill_uri_already_served_by_a_resource_is_refused(tmp_path: Path) -> None:
    from trio_mcp import DuplicateName, resource

    @resource(uri="skill://clash/SKILL.md")
    def clash() -> str:
        """Takes the skill's URI."""
        return ""

    with pytest.raises(DuplicateName):
        Server(
            "s",
            "1",
            resources=[clash],
            skills=[Skill.from_directory(write_skill(tmp_path, "clash"))],
        )


def test_hidden_files_are_not_part_of_the_skill(tmp_path: Path) -> None:
    folder = write_skill(
        tmp_path, "good-name", {".git/HEAD": "ref", ".env": "SECRET=1"}
    )
    os.mkfifo(folder / ".pipe")  # not even looked at
    server = Server("s", "1", skills=[Skill.from_directory(folder)])
    assert ["skill://good-name/SKILL.md"] == [s.uri for s in server.catalog()]  # type: ignore[union-attr]


def test_skills_takes_skill_values(tmp_path: Path) -> None:
    with pytest.raises(InvalidDeclaration, match=r"Skill\.all_in"):
        Server("s", "1", skills=str(tmp_path))  # type: ignore[arg-type]
    with pytest.raises(InvalidDeclaration, match="takes Skill values"):
        Server("s", "1", skills=[str(tmp_path)])  # type: ignore[list-item]
    with pytest.raises(InvalidDeclaration, match="is not a folder"):
        Skill.all_in(tmp_path / "missing")


def test_the_toolchain_refuses_a_broken_skills_folder_before_serving(
    tmp_path: Path,
) -> None:
    import subprocess
    import sys

    write_tree(tmp_path / "skills" / "Bad", {"SKILL.md": skill_md("bad")})
    done = subprocess.run(
        [sys.executable, "-m", "trio_mcp", "mcp", "--skills", str(tmp_path / "skills")],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert 2 == done.returncode
    assert "(rule: name-matches-folder)" in done.stderr
    assert "" == done.stdout


def test_an_alias_bomb_is_refused_at_once_without_expanding_it(tmp_path: Path) -> None:
    """Depth 9 expands to 9**10 strings; refused while reading, before any is built."""
    folder = write_tree(
        tmp_path / "good-name", {"SKILL.md": skill_md("good-name", extra=alias_bomb(9))}
    )
    started = time.monotonic()
    message = refusal(folder)
    assert time.monotonic() - started < 1.0
    assert "anchors and aliases" in message
    assert "(rule: frontmatter)" in message

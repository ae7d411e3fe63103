"""F18 (issue 34): ``trio-mcp lock --check`` on a lock file it did not write: one
clear line on stderr, exit status 1, never a traceback; whatever the file holds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import cli, write_server
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trio_mcp._cli._lock import LOCK_VERSION, run_lock

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=10,
)
KINDS = st.sampled_from(["tools", "resources", "prompts"])


@st.composite
def lock_documents(draw: st.DrawFn) -> bytes:
    """Anything a file may hold: bytes, JSON, and lock-shaped JSON gone wrong."""
    shape = draw(st.sampled_from(["bytes", "json", "lock"]))
    if shape == "bytes":
        return draw(st.binary(max_size=40))
    if shape == "json":
        return json.dumps(draw(JSON)).encode()
    document: dict[str, Any] = {"version": LOCK_VERSION, "server": "echo-server"}
    document[draw(KINDS)] = draw(
        JSON | st.dictionaries(st.text(max_size=5), JSON, max_size=2)
    )
    return json.dumps(document).encode()


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(content=lock_documents())
def test_any_lock_file_is_answered_with_a_status_and_no_traceback(
    content: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_server(tmp_path)
    lock = tmp_path / "mcp.lock"
    lock.write_bytes(content)
    target = str(tmp_path / "echo_server.py") + ":server"

    status = run_lock(target, str(lock), check=True)

    err = capsys.readouterr().err
    assert 1 == status
    assert "Traceback" not in err
    assert "trio-mcp lock" in err  # says what to run


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"not json", "is not JSON"),
        (b"\xff\xfe", "not UTF-8"),
        (b"[]", "holds a JSON list, not an object"),
        (b'{"version": 2, "tools": 5}', "'tools' is not an object"),
        (b'{"version": 2, "tools": {"echo": {}}}', "'tools.echo' has no digest"),
    ],
)
def test_a_bad_lock_file_is_one_clear_line_from_the_command(
    content: bytes, says: str, tmp_path: Path
) -> None:
    write_server(tmp_path)
    (tmp_path / "mcp.lock").write_bytes(content)

    done = cli("lock", "echo_server.py:server", "--check", cwd=tmp_path)

    assert 1 == done.returncode
    assert "Traceback" not in done.stderr
    assert says in done.stderr
    assert 1 == len(done.stderr.strip().splitlines())


def written_lock(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """The lock document ``trio-mcp lock`` writes for the echo server (in process)."""
    write_server(tmp_path)
    lock = tmp_path / "mcp.lock"
    assert 0 == run_lock(
        f"{tmp_path / 'echo_server.py'}:server", str(lock), check=False
    )
    capsys.readouterr()
    document: dict[str, Any] = json.loads(lock.read_text())
    return document


def check(
    tmp_path: Path, content: bytes, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str]:
    """``trio-mcp lock --check`` of ``content`` in this process: status, out, err."""
    write_server(tmp_path)
    lock = tmp_path / "mcp.lock"
    lock.write_bytes(content)
    status = run_lock(f"{tmp_path / 'echo_server.py'}:server", str(lock), check=True)
    out, err = capsys.readouterr()
    return status, out, err


NAMES = st.text(st.characters(codec="utf-8"), min_size=1, max_size=8)


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    provider=st.none() | st.tuples(NAMES, NAMES),
    dropped=st.sets(st.sampled_from(["resources", "prompts"])),
)
def test_a_lock_it_wrote_matches_with_a_provider_and_without_empty_kinds(
    provider: tuple[str, str] | None,
    dropped: set[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """What ``lock`` writes checks clean, also with a provider recorded on a tool
    (a distribution and its version) and with the kinds the server has none of
    left out (``compare`` reads them as empty)."""
    document = written_lock(tmp_path, capsys)
    if provider is not None:
        distribution, version = provider
        document["tools"]["echo"]["provider"] = {
            "distribution": distribution,
            "version": version,
        }
    for kind in dropped:
        del document[kind]

    status, out, err = check(tmp_path, json.dumps(document).encode(), capsys)

    assert (0, "") == (status, err)
    assert out.endswith("mcp.lock matches the catalog\n")


ECHO: dict[str, Any] = {"digest": "sha256:0", "parts": {}}


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"not json", "it is not JSON: Expecting value: line 1 column 1 (char 0)"),
        (b"\xff\xfe", "it is not UTF-8 text"),
        (b"[]", "it holds a JSON list, not an object"),
        (b"null", "it holds a JSON NoneType, not an object"),
        ({"tools": 5}, "'tools' is not an object"),
        ({"prompts": []}, "'prompts' is not an object"),
        ({"tools": {"echo": {}}}, "'tools.echo' has no digest"),
        ({"tools": {"echo": "sha256:0"}}, "'tools.echo' has no digest"),
        ({"tools": {"echo": {"digest": 5}}}, "'tools.echo' has no digest"),
        (
            {"resources": {"r": {"digest": "sha256:0", "parts": []}}},
            "'resources.r.parts' is not an object",
        ),
        *(
            (
                {"tools": {"echo": {**ECHO, "provider": provider}}},
                "'tools.echo.provider' is not a distribution and version",
            )
            for provider in [
                "fixture-tools 1.0",
                {"distribution": "fixture-tools"},
                {"version": "1.0"},
                {"distribution": "fixture-tools", "version": 1},
                {"distribution": None, "version": "1.0"},
            ]
        ),
    ],
)
def test_a_lock_gone_wrong_is_named_in_the_one_line(
    content: bytes | dict[str, Any],
    reason: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The reason names the place in the file and what is wrong there."""
    if isinstance(content, dict):
        content = json.dumps({"version": LOCK_VERSION, **content}).encode()

    status, out, err = check(tmp_path, content, capsys)

    assert (1, "") == (status, out)
    lock = tmp_path / "mcp.lock"
    target = f"{tmp_path / 'echo_server.py'}:server"
    assert (
        f"{lock} is not a lock file this trio-mcp can read ({reason}); run "
        f"'trio-mcp lock {target}' to write it again\n"
    ) == err

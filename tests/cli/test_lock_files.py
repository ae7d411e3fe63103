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

"""``trio-mcp call`` of a server outside the process: a URL, or a command after
``--``; the result printed as the client received it, as an in-process call prints it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import trio
from cli_helpers import cli
from support import serving
from support.upstream import make_server, stdio_command


def _call(
    *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return cli("call", *args, cwd=Path.cwd(), env=env)


def test_a_tool_of_a_command_after_the_double_dash() -> None:
    done = _call("add", "--args", '{"a": 2, "b": 3}', "--", *stdio_command())

    assert 0 == done.returncode, done.stderr
    assert {"total": 5} == json.loads(done.stdout)["structuredContent"]


def test_a_handshake_era_command_gives_the_same_result() -> None:
    done = _call("echo", "--args", '{"text": "hi"}', "--", *stdio_command("--legacy"))

    assert 0 == done.returncode, done.stderr
    assert "hi" == json.loads(done.stdout)["content"][0]["text"]


def test_a_tool_error_and_a_protocol_error_exit_1() -> None:
    failed = _call("fail", "--args", '{"why": "no"}', "--", *stdio_command())
    unknown = _call("nope", "--", *stdio_command())

    assert (1, True) == (failed.returncode, json.loads(failed.stdout)["isError"])
    assert (1, -32602) == (
        unknown.returncode,
        json.loads(unknown.stdout)["error"]["code"],
    )


def test_a_resource_of_a_command() -> None:
    done = _call("--resource", "note://a", "--", *stdio_command())

    assert 0 == done.returncode, done.stderr
    assert "note a" == json.loads(done.stdout)["contents"][0]["text"]


def test_a_command_after_the_dash_needs_the_tool_before_it() -> None:
    done = _call("--", *stdio_command())
    both = _call("echo", "extra", "--", *stdio_command())

    assert (2, 2) == (done.returncode, both.returncode)
    assert "name one thing to call" in done.stderr
    assert "name the TOOL before it" in both.stderr


def test_an_unreachable_url_is_one_line_and_status_2() -> None:
    done = _call("http://127.0.0.1:9/mcp", "echo")

    assert 2 == done.returncode
    assert "Traceback" not in done.stderr
    assert "could not connect to http://127.0.0.1:9/mcp" in done.stderr


async def test_a_tool_at_a_url_with_its_token_from_the_environment() -> None:
    seen: list[str] = []

    async def principal(scope: dict[str, object]) -> str | None:
        headers = dict(scope["headers"])  # type: ignore[call-overload]
        seen.append(headers.get(b"authorization", b"").decode())
        return "caller"

    async with serving(make_server(), principal=principal) as url:
        done = await trio.run_process(
            [sys.executable, "-m", "trio_mcp", "call", url + "/mcp", "echo",
             "--args", '{"text": "hi"}', "--auth-env", "UPSTREAM_TOKEN",
             "--header", "x-team: blue"],
            capture_stdout=True,
            capture_stderr=True,
            check=False,
            env={**os.environ, "UPSTREAM_TOKEN": "s3cret"},
        )  # fmt: skip

    assert 0 == done.returncode, done.stderr
    assert "hi" == json.loads(done.stdout)["content"][0]["text"]
    assert {"Bearer s3cret"} == set(seen)

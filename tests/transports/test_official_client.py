"""The official Python SDK's client (``mcp`` 2.3.0) against a trio_mcp server on stdio.

The client's default ``mode="auto"`` probes ``server/discover`` at 2026-07-28 and
adopts the modern, stateless revision when the server answers, so it discovers,
lists and calls against us without the legacy handshake. ``mode="legacy"`` sends
``initialize``, which this revision removed; we answer -32601 naming the versions
we serve (api.md, "Removed methods"), and the client reports that error.

The server runs behind ``tee`` on both pipes, so every message it wrote is checked
against the revision's schema afterwards, paired with the request it answers.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
import trio
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp.types import LoggingMessageNotificationParams

from trio_mcp.testing import check_message

ROOT = Path(__file__).resolve().parents[2]
PROBE = ROOT / "examples" / "stdio_probe_server.py"
WAIT = 30.0


def teed_server(tmp_path: Path) -> StdioServerParameters:
    """Launch the probe with its stdin and stdout copied to files in ``tmp_path``."""
    command = (
        f"tee {shlex.quote(str(tmp_path / 'in.jsonl'))} "
        f"| {shlex.quote(sys.executable)} {shlex.quote(str(PROBE))} "
        f"| tee {shlex.quote(str(tmp_path / 'out.jsonl'))}"
    )
    return StdioServerParameters(command="sh", args=["-c", command], cwd=str(ROOT))


def check_transcript(tmp_path: Path) -> tuple[list[str], list[dict[str, Any]]]:
    """Validate every message the server wrote; return the client's methods and them."""
    methods: dict[Any, str] = {}
    sent: list[str] = []
    for line in (tmp_path / "in.jsonl").read_text().splitlines():
        message = json.loads(line)
        sent.append(message["method"])
        if "id" in message:
            methods[message["id"]] = message["method"]
    written = [
        json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()
    ]
    for message in written:
        check_message(message, methods.get(message.get("id")))
    return sent, written


async def test_official_client_discovers_lists_and_calls_over_stdio(
    tmp_path: Path,
) -> None:
    """Interop: the SDK adopts 2026-07-28 via server/discover, then lists and calls."""
    seen_progress: list[tuple[float, float | None]] = []
    logs: list[tuple[str, Any]] = []

    async def on_progress(
        progress: float, total: float | None, message: str | None
    ) -> None:
        seen_progress.append((progress, total))

    async def on_log(params: LoggingMessageNotificationParams) -> None:
        logs.append((params.level, params.data))

    with trio.fail_after(WAIT):
        async with Client(
            teed_server(tmp_path), logging_callback=on_log, log_level="info"
        ) as client:
            version = client.protocol_version
            tools = await client.list_tools()
            echoed = await client.call_tool("echo", {"text": "hello"})
            failed = await client.call_tool("fail_for_model")
            await client.call_tool(
                "report", {"steps": 2}, progress_callback=on_progress
            )
    sent, written = check_transcript(tmp_path)

    assert version == "2026-07-28"
    assert sent[0] == "server/discover"
    assert "initialize" not in sent
    assert all("error" not in m for m in written)
    assert {"echo", "nap", "report"} <= {tool.name for tool in tools.tools}
    assert echoed.is_error is False
    assert echoed.structured_content == "hello"
    assert [block.text for block in echoed.content] == ["hello"]  # type: ignore[union-attr]
    assert failed.is_error is True
    assert seen_progress == [(1, 2), (2, 2)]
    assert logs == [("info", "an info line")]


async def test_official_client_in_legacy_mode_is_told_the_supported_versions(
    tmp_path: Path,
) -> None:
    """api.md: initialize is a removed method, -32601 naming the supported versions."""
    errors: list[MCPError] = []
    with trio.fail_after(WAIT):
        try:
            async with Client(teed_server(tmp_path), mode="legacy"):
                pytest.fail("the legacy handshake must not succeed")
        except* MCPError as group:  # the SDK's task groups wrap it
            errors.extend(e for e in _leaves(group) if isinstance(e, MCPError))
    sent, written = check_transcript(tmp_path)

    assert sent[0] == "initialize"
    assert [e.error.code for e in errors] == [-32601]
    assert "2026-07-28" in errors[0].error.message
    assert errors[0].error.data == {"supported": ["2026-07-28"]}
    assert [m["error"]["code"] for m in written] == [-32601]


def _leaves(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    out: list[BaseException] = []
    for exc in group.exceptions:
        out.extend(_leaves(exc) if isinstance(exc, BaseExceptionGroup) else [exc])
    return out

"""The official Python SDK's client (``mcp`` 2.3.0) in its handshake mode, over stdio.

``Client(mode="legacy")`` sends ``initialize`` and speaks revision 2025-11-25 to a
real ``trio-mcp run TARGET --legacy`` subprocess: lists, calls with progress,
logging after ``logging/setLevel``, elicitation, sampling and roots through the
client's callbacks, cancellation, and resource updates after ``resources/subscribe``.

The server runs behind ``tee`` on both pipes; afterwards every message it wrote is
validated against the 2025-11-25 schema, paired with the request it answers.
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
from mcp import types as mcp_types
from support.legacy_schema import check_legacy
from support.sdk import check_handshake_tour, handshake_tour

#: The client warns on each handshake-era method (removed or deprecated by 2026-07-28):
#: its opinion of the era this test exercises on purpose.
pytestmark = pytest.mark.filterwarnings(
    "ignore::mcp.shared.exceptions.MCPDeprecationWarning"
)

ROOT = Path(__file__).resolve().parents[2]
TARGET = ROOT / "tests" / "legacy" / "legacy_server.py"
WAIT = 30.0


def teed(tmp_path: Path, *extra: str) -> StdioServerParameters:
    """``trio-mcp run`` on the legacy test server, both pipes copied to files."""
    run = shlex.join(
        [sys.executable, "-m", "trio_mcp", "run", f"{TARGET}:make_server", *extra]
    )
    command = (
        f"tee {shlex.quote(str(tmp_path / 'in.jsonl'))} | {run} "
        f"| tee {shlex.quote(str(tmp_path / 'out.jsonl'))}"
    )
    return StdioServerParameters(command="sh", args=["-c", command], cwd=str(ROOT))


def transcript(tmp_path: Path, revision: str) -> list[dict[str, Any]]:
    """Validate what the server wrote; return the client's messages."""
    sent = [
        json.loads(line) for line in (tmp_path / "in.jsonl").read_text().splitlines()
    ]
    methods = {m["id"]: m["method"] for m in sent if "id" in m and "method" in m}
    for line in (tmp_path / "out.jsonl").read_text().splitlines():
        message = json.loads(line)
        check_legacy(message, revision, methods.get(message.get("id")))
    return sent


async def test_the_python_client_in_handshake_mode(tmp_path: Path) -> None:
    seen = await handshake_tour(teed(tmp_path, "--legacy"), WAIT)

    check_handshake_tour(seen)
    sent = transcript(tmp_path, "2025-11-25")
    assert "initialize" == sent[0]["method"]
    cancelled = [m for m in sent if m.get("method") == "notifications/cancelled"]
    assert cancelled, "the client cancelled the forever call"
    asked = [m for m in sent if "result" in m]
    assert 5 == len(
        asked
    )  # elicitation, sampling, roots, then elicitation and sampling


async def test_resource_updates_reach_the_python_client(tmp_path: Path) -> None:
    """The server's updates reach a subscribed client (a trigger tool updates)."""
    updated = trio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, mcp_types.ResourceUpdatedNotification):
            updated.set()

    with trio.fail_after(WAIT):
        async with Client(
            teed(tmp_path, "--legacy"), mode="legacy", message_handler=on_message
        ) as client:
            await client.subscribe_resource("watch://counter")
            await client.call_tool("touch", {})
            await updated.wait()
            await client.unsubscribe_resource("watch://counter")

    transcript(tmp_path, "2025-11-25")

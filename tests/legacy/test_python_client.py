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
from mcp.client.session import ClientRequestContext
from support.legacy_schema import check_legacy

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


async def elicit(
    context: ClientRequestContext, params: mcp_types.ElicitRequestParams
) -> mcp_types.ElicitResult:
    return mcp_types.ElicitResult(action="accept", content={"name": "Ada"})


async def sample(
    context: ClientRequestContext, params: mcp_types.CreateMessageRequestParams
) -> mcp_types.CreateMessageResult:
    return mcp_types.CreateMessageResult(
        role="assistant",
        content=mcp_types.TextContent(type="text", text="Paris"),
        model="test-model",
        stop_reason="endTurn",
    )


async def roots(context: ClientRequestContext) -> mcp_types.ListRootsResult:
    return mcp_types.ListRootsResult(
        roots=[mcp_types.Root.model_validate({"uri": "file:///work", "name": "work"})]
    )


async def test_the_python_client_in_handshake_mode(tmp_path: Path) -> None:
    logs: list[tuple[str, Any]] = []
    progressed: list[float] = []
    notes: list[Any] = []
    waiting = trio.Event()

    async def on_log(params: mcp_types.LoggingMessageNotificationParams) -> None:
        logs.append((params.level, params.data))
        if params.data == "waiting":
            waiting.set()

    async def on_message(message: Any) -> None:
        notes.append(message)

    async def on_progress(
        progress: float, total: float | None, message: str | None
    ) -> None:
        progressed.append(progress)

    with trio.fail_after(WAIT):
        async with Client(
            teed(tmp_path, "--legacy"),
            mode="legacy",
            elicitation_callback=elicit,
            sampling_callback=sample,
            list_roots_callback=roots,
            logging_callback=on_log,
            message_handler=on_message,
        ) as client:
            version = client.protocol_version
            info = client.server_info
            tools = await client.list_tools()
            added = await client.call_tool("add", {"a": 2, "b": 3})
            greeted = await client.call_tool("ask_name", {})
            modelled = await client.call_tool("ask_model", {})
            rooted = await client.call_tool("ask_roots", {})
            both = await client.call_tool("ask_twice", {})
            await client.set_logging_level("info")
            slow = await client.call_tool(
                "slow", {"steps": 3}, progress_callback=on_progress
            )
            read = await client.read_resource("note://alpha")
            prompt = await client.get_prompt("greet", {"name": "Ada"})
            await client.subscribe_resource("watch://counter")
            async with trio.open_nursery() as nursery:
                nursery.start_soon(client.call_tool, "forever", {})
                await waiting.wait()
                nursery.cancel_scope.cancel()
            pong = await client.send_ping()
            after = await client.call_tool("echo", {"text": "still here"})

    assert "2025-11-25" == version
    assert info is not None
    assert "legacy-test" == info.name
    assert "ask_name" in {t.name for t in tools.tools}
    assert {"result": 5} == added.structured_content
    assert "Hello, Ada!" == greeted.content[0].text  # type: ignore[union-attr]
    assert "The model said: Paris" == modelled.content[0].text  # type: ignore[union-attr]
    assert "file:///work" == rooted.content[0].text  # type: ignore[union-attr]
    assert "Ada: Paris" == both.content[0].text  # type: ignore[union-attr]
    assert "done after 3 steps" == slow.content[0].text  # type: ignore[union-attr]
    assert [1, 2, 3] == progressed
    assert [("info", f"step {i}") for i in (1, 2, 3)] == logs[:3]
    assert "first note" == read.contents[0].text  # type: ignore[union-attr]
    assert "Hello, Ada" == prompt.messages[0].content.text  # type: ignore[union-attr]
    assert pong is not None
    assert "still here" == after.content[0].text  # type: ignore[union-attr]
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

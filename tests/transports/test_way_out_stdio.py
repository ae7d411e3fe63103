"""The way out over a real stdio subprocess (api.md "The way out", issue 10).

Before the reply guard, each of these ended the whole server process: a lone
surrogate echoed back (``UnicodeEncodeError`` in the writer), NaN from ``-> float``,
a dict from ``-> Ticket``, a str from ``-> list[TextContent]``, an int from a
prompt. Now each ends its own request with -32603 and the next request is
answered; every line stays valid UTF-8 JSON that fits the revision's schema.
"""

from __future__ import annotations

import pytest
from support.wayout_peer import error_code, spawn
from support.wayout_server import BAD_PROMPTS, BAD_RESOURCES, BAD_TOOLS

INTERNAL_ERROR = -32603


async def test_a_lone_surrogate_is_echoed_escaped_and_the_next_request_answered() -> (
    None
):
    """Our choice (docs/errors.md): escape on the way out; the JSON value is unchanged."""
    async with spawn() as peer:
        await peer.call(1, "echo", text="\ud800 and \udfff")
        await peer.call(2, "add", a=2, b=3)

        first = await peer.reply(1)
        second = await peer.reply(2)

    assert first["result"]["structuredContent"] == "\ud800 and \udfff"
    assert second["result"]["structuredContent"] == 5


@pytest.mark.parametrize("name", sorted(BAD_TOOLS))
async def test_a_tool_breaking_its_return_type_fails_alone(name: str) -> None:
    """api.md: -32603 for that request; the server goes on serving."""
    async with spawn() as peer:
        await peer.call(1, name)
        await peer.call(2, "add", a=1, b=1)

        bad = await peer.reply(1)
        good = await peer.reply(2)

    assert error_code(bad) == INTERNAL_ERROR
    assert good["result"]["structuredContent"] == 2


async def test_a_prompt_and_resources_breaking_their_types_fail_alone() -> None:
    """The same guard on ``prompts/get`` and ``resources/read``; one process serves all."""
    async with spawn() as peer:
        (name,) = BAD_PROMPTS
        await peer.request(1, "prompts/get", {"name": name})
        for number, uri in enumerate(sorted(BAD_RESOURCES), start=2):
            await peer.request(number, "resources/read", {"uri": uri})
        await peer.call(9, "add", a=4, b=5)

        codes = [error_code(await peer.reply(n)) for n in (1, 2, 3)]
        good = await peer.reply(9)
        exit_status = await peer.close_stdin_and_wait()

    assert codes == [INTERNAL_ERROR] * 3
    assert good["result"]["structuredContent"] == 9
    assert exit_status == 0


async def test_every_bad_reply_in_one_process_and_it_still_exits_cleanly() -> None:
    """Hostile returns one after another: each answered once, then a clean EOF exit."""
    names = sorted(BAD_TOOLS)
    async with spawn() as peer:
        for number, name in enumerate(names, start=1):
            await peer.call(number, name)
            await peer.call(100 + number, "echo", text=f"\ud83d{number}")

        replies = [await peer.reply(n) for n in range(1, len(names) + 1)]
        echoes = [await peer.reply(100 + n) for n in range(1, len(names) + 1)]
        exit_status = await peer.close_stdin_and_wait()

    assert [error_code(r) for r in replies] == [INTERNAL_ERROR] * len(names)
    assert [e["result"]["structuredContent"] for e in echoes] == [
        f"\ud83d{n}" for n in range(1, len(names) + 1)
    ]
    assert len(peer.messages) == 2 * len(names)
    assert exit_status == 0

"""Overload over a real stdio subprocess (api.md "The way out", docs/limits.md).

Before, the loop stopped reading stdin while every ``max_concurrent`` slot was
taken: with ``max_concurrent=1`` one open ``subscriptions/listen`` stream starved
``server/discover``, and the ``notifications/cancelled`` that would end the stream
or a long call was never read. Now the loop keeps reading: listens take no slot,
quick methods are answered by the loop, cancellations are always honoured, and a
call beyond ``max_concurrent + max_waiting`` is answered at once with -32000.
"""

from __future__ import annotations

from support.wayout_peer import Peer, cancel_message, error_code, request_message, spawn

SERVER_BUSY = -32000
ACK = "notifications/subscriptions/acknowledged"
SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"


def acks(peer: Peer) -> list[object]:
    """The subscription ids acknowledged so far."""
    return [
        m["params"]["_meta"][SUBSCRIPTION]
        for m in peer.messages
        if m.get("method") == ACK
    ]


async def test_listens_take_no_slot_discover_is_answered_and_a_cancel_ends_one() -> (
    None
):
    listens = [f"listen-{n}" for n in range(5)]
    async with spawn("--max-concurrent", "1") as peer:
        for listen in listens:
            await peer.request(
                listen,
                "subscriptions/listen",
                {"notifications": {"toolsListChanged": True}},
            )
        await peer.wait_for(lambda: len(acks(peer)) == 5)
        await peer.request("discover", "server/discover")
        discovered = await peer.reply("discover")
        await peer.cancel("listen-0")
        await peer.call("add", "add", a=1, b=2)
        added = await peer.reply("add")

        exit_status = await peer.close_stdin_and_wait()
        await peer.wait_for(lambda: all(peer.find(i) for i in listens[1:]))

    assert sorted(acks(peer)) == listens  # type: ignore[type-var]
    assert discovered["result"]["supportedVersions"] == ["2026-07-28"]
    assert added["result"]["structuredContent"] == 3
    assert exit_status == 0
    # End of stdin ends the open listens with their result; the cancelled one has none.
    assert peer.find("listen-0") is None
    assert all("result" in (peer.find(i) or {}) for i in listens[1:])


async def test_a_cancel_for_the_running_call_is_read_while_five_more_wait() -> None:
    async with spawn("--max-concurrent", "1") as peer:
        for number in range(1, 7):
            await peer.call(number, "wait_until_cancelled", label=f"call-{number}")
        await peer.probe("started call-1")

        await peer.cancel(1)
        await peer.probe("cancelled call-1")
        await peer.probe("started call-2")  # the freed slot goes to a waiting call
        for number in range(2, 7):
            await peer.cancel(number)
        await peer.call(7, "add", a=3, b=4)
        after = await peer.reply(7)

    assert after["result"]["structuredContent"] == 7
    assert [peer.find(n) for n in range(1, 7)] == [None] * 6


async def test_beyond_max_waiting_a_call_is_refused_at_once_then_served_again() -> None:
    async with spawn("--max-concurrent", "1", "--max-waiting", "2") as peer:
        for number in range(1, 4):
            await peer.call(number, "wait_until_cancelled", label=f"call-{number}")
        await peer.probe("started call-1")
        await peer.call(4, "add", a=1, b=1)
        refused = await peer.reply(4)
        await peer.request("discover", "server/discover")
        discovered = await peer.reply("discover")

        for number in range(1, 4):
            await peer.cancel(number)
            await peer.probe(f"cancelled call-{number}")
        for number in range(5, 8):
            await peer.call(number, "add", a=number, b=0)
        served = [await peer.reply(n) for n in range(5, 8)]

    assert error_code(refused) == SERVER_BUSY
    assert refused["error"]["data"] == {"retryable": True}
    assert "server busy" in refused["error"]["message"]
    assert discovered["result"]["supportedVersions"] == ["2026-07-28"]
    assert [r["result"]["structuredContent"] for r in served] == [5, 6, 7]
    assert [peer.find(n) for n in range(1, 4)] == [None] * 3


async def test_one_listen_past_max_listens_is_refused_until_one_ends() -> None:
    params = {"notifications": {"toolsListChanged": True}}
    async with spawn("--max-listens", "2") as peer:
        for listen in ("a", "b", "c"):
            await peer.request(listen, "subscriptions/listen", params)
        refused = await peer.reply("c")
        await peer.wait_for(lambda: sorted(acks(peer)) == ["a", "b"])  # type: ignore[type-var]
        await peer.cancel("a")
        await peer.request("d", "subscriptions/listen", params)
        await peer.wait_for(lambda: "d" in acks(peer))
        # Calls are not listens: they are served while the listens are open.
        await peer.call(1, "add", a=1, b=1)
        added = await peer.reply(1)

    assert error_code(refused) == SERVER_BUSY
    assert "2 listen streams are open" in refused["error"]["message"]
    assert added["result"]["structuredContent"] == 2


async def test_a_cancelled_call_frees_its_place_for_the_very_next_message() -> None:
    """A client that cancels a call and sends another in the same write is served:
    the place is counted free when the cancellation is read, not when the cancelled
    task has unwound (before, this raced and often got -32000)."""
    async with spawn("--max-concurrent", "1", "--max-waiting", "0") as peer:
        for round_ in range(10):
            label = f"call-{round_}"
            await peer.call(label, "wait_until_cancelled", label=label)
            await peer.probe(f"started {label}")
            await peer.send_together(
                cancel_message(label),
                request_message(
                    round_,
                    "tools/call",
                    {"name": "add", "arguments": {"a": round_, "b": 0}},
                ),
            )
            replaced = await peer.reply(round_)
            assert error_code(replaced) is None, replaced
            assert replaced["result"]["structuredContent"] == round_


async def test_a_cancelled_listen_frees_its_place_for_the_very_next_message() -> None:
    params = {"notifications": {"toolsListChanged": True}}
    async with spawn("--max-listens", "1") as peer:
        await peer.request("listen-0", "subscriptions/listen", params)
        await peer.wait_for(lambda: acks(peer) == ["listen-0"])
        for round_ in range(1, 11):
            listen = f"listen-{round_}"
            await peer.send_together(
                cancel_message(f"listen-{round_ - 1}"),
                request_message(listen, "subscriptions/listen", params),
            )
            await peer.wait_for(
                lambda listen=listen: (  # type: ignore[misc]
                    listen in acks(peer) or peer.find(listen) is not None
                )
            )
            assert peer.find(listen) is None  # acknowledged, not refused

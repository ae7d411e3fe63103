"""Durable tasks across real replicas (issue 43): ``trio-mcp serve`` processes of
``scale_server.py`` sharing one real redis-server through a ``RedisStore`` whose
heartbeat lasts 1 s (10 s where a test shows a hand-over needs no heartbeat).

Each test kills, stops or pauses the replica running a task and reads the task on
another one over HTTP, as a client would.
"""

from __future__ import annotations

import os
import signal
import time
from typing import Any

import coredis
import httpx
import pytest
import trio
from support.mcp_http import request_body
from support.scale_http import TASK_META, create_task, headers, rpc, task_until
from support.scale_procs import RedisServer, Replicas

ALICE = {"action": "accept", "content": {"name": "Alice"}}
SECRET = "PLAINTEXT-DURABLE-SEKRIT"
TOKEN = "BEARER-TOKEN-NEVER-STORED"


@pytest.fixture
def env(redis_server: RedisServer) -> dict[str, str]:
    return {"SCALE_STORE_URL": redis_server.url}


async def get(url: str, task_id: str) -> dict[str, Any]:
    _, message = await rpc(url, "tasks/get", task_id, taskId=task_id)
    task: dict[str, Any] = message["result"]
    return task


def text(task: dict[str, Any]) -> str:
    value: str = task["result"]["structuredContent"]
    return value


async def test_a_durable_task_of_a_killed_replica_completes_on_another_and_a_plain_one_fails(
    env: dict[str, str], replicas: Replicas
) -> None:
    a = replicas.start("replica-a", env=env).url
    b = replicas.start("replica-b", "--metrics-path", "/metrics", env=env).url
    durable = await create_task(a, "durable_work", n=7, seconds=2.0)
    plain = await create_task(a, "plain_work", seconds=30.0)
    await task_until(b, durable, "working")

    replicas.kill("replica-a")
    done = await task_until(b, durable, "completed", "failed")
    failed = await task_until(b, plain, "failed", "completed")
    async with httpx.AsyncClient() as client:
        scraped = (await client.get(b.removesuffix("/mcp") + "/metrics")).text

    assert "completed" == done["status"], done
    assert text(done).startswith("7@replica-b:")
    assert text(done).endswith("#2")
    assert "failed" == failed["status"]
    assert (
        "the process running this task stopped before the task finished"
        == failed["error"]["message"]
    )
    assert 'trio_mcp_tasks_resumed_total{reason="heartbeat"} 1.0' in scraped
    assert 'trio_mcp_tasks_abandoned_total{reason="not_durable"} 1.0' in scraped


async def test_a_graceful_stop_hands_over_at_once_and_leaves_nothing_working(
    env: dict[str, str], replicas: Replicas
) -> None:
    """Heartbeat 10 s: SIGINT, then SIGTERM, stop a replica; its durable task runs
    again on the other well within the heartbeat, its plain one reads failed
    at once (never ``working``), and the process exits with 0."""
    slow = {**env, "SCALE_HEARTBEAT": "10"}
    a = replicas.start("replica-a", env=slow).url
    b = replicas.start("replica-b", env=slow).url
    c = replicas.start("replica-c", env=slow).url
    durable = await create_task(a, "durable_work", n=1, seconds=1.0)
    plain = await create_task(a, "plain_work", seconds=30.0)
    await task_until(b, durable, "working")

    stopped_at = time.monotonic()
    stopped = replicas.signal("replica-a", signal.SIGINT)
    plain_view = await task_until(b, plain, "failed", "completed")
    first = await task_until(b, durable, "completed", "failed")
    first_took = time.monotonic() - stopped_at
    a_status = stopped.process.wait(timeout=10)

    again = await create_task(b, "durable_work", n=2, seconds=1.0)
    await task_until(c, again, "working")
    stopped_at = time.monotonic()
    replicas.signal("replica-b", signal.SIGTERM)
    second = await task_until(c, again, "completed", "failed")
    second_took = time.monotonic() - stopped_at

    assert 0 == a_status
    assert "failed" == plain_view["status"]
    assert "stopped before the task finished" in plain_view["error"]["message"]
    assert text(first).endswith("#2"), first
    assert not text(first).startswith("1@replica-a:")
    assert text(second).startswith("2@replica-c:"), second
    assert first_took < 6.0
    assert second_took < 6.0


async def test_sigterm_to_a_replica_of_two_workers_hands_its_tasks_over_at_once(
    env: dict[str, str], replicas: Replicas
) -> None:
    """``--workers 2`` (Hypercorn's workers end the app's lifespan under a cancelled
    scope): heartbeat 10 s, yet the durable tasks run again on B at once, and the
    plain one reads failed."""
    slow = {**env, "SCALE_HEARTBEAT": "10"}
    a = replicas.start("replica-a", "--workers", "2", env=slow).url
    b = replicas.start("replica-b", env=slow).url
    with trio.fail_after(30):  # both workers up: a call lands on each in turn
        ids = [await create_task(a, "durable_work", n=n, seconds=1.0) for n in range(4)]
    plain = await create_task(a, "plain_work", seconds=30.0)
    await task_until(b, ids[-1], "working")

    stopped_at = time.monotonic()
    replicas.signal("replica-a", signal.SIGTERM)
    done = [await task_until(b, task_id, "completed", "failed") for task_id in ids]
    took = time.monotonic() - stopped_at
    failed = await task_until(b, plain, "failed", "completed")

    assert all(text(view).endswith("#2") for view in done), done
    assert all(":" in text(view) and "@replica-b:" in text(view) for view in done)
    assert took < 6.0
    assert "failed" == failed["status"]


async def test_a_paused_replica_never_changes_a_finished_outcome(
    env: dict[str, str], replicas: Replicas
) -> None:
    """SIGSTOP past the heartbeat, then SIGCONT: the plain task stays failed and the
    durable one keeps the outcome of the attempt that ran on B."""
    a, b = replicas.pair(env)
    durable = await create_task(a, "durable_work", n=3, seconds=2.0)
    plain = await create_task(a, "plain_work", seconds=2.0)
    await task_until(b, durable, "working")

    replicas.signal("replica-a", signal.SIGSTOP)
    failed = await task_until(b, plain, "failed", "completed")
    resumed = await task_until(b, durable, "completed", "failed")
    replicas.signal("replica-a", signal.SIGCONT)
    await trio.sleep(3.0)  # A's attempts finish their sleep and try to write
    seen = [(await get(url, plain), await get(url, durable)) for url in (a, b, a, b)]

    assert "failed" == failed["status"]
    assert text(resumed).startswith("3@replica-b:")
    for plain_view, durable_view in seen:
        assert "failed" == plain_view["status"]
        assert plain_view["error"] == failed["error"]
        assert durable_view["result"] == resumed["result"]


async def test_max_attempts_is_honoured(
    env: dict[str, str], replicas: Replicas
) -> None:
    """``durable_twice`` may run twice: killed on A, it runs on B; killed on B, it
    fails on C saying how many attempts ran."""
    a = replicas.start("replica-a", env=env).url
    b = replicas.start("replica-b", env=env).url
    task_id = await create_task(a, "durable_twice", seconds=60.0)
    await task_until(b, task_id, "working")
    replicas.kill("replica-a")
    await task_until(b, task_id, "working", says="attempt 2")
    c = replicas.start("replica-c", env=env).url
    replicas.kill("replica-b")
    failed = await task_until(c, task_id, "failed", "completed")

    assert "failed" == failed["status"]
    assert "ran 2 attempt(s), its max_attempts" in failed["error"]["message"]


async def test_cancel_on_another_replica_stops_every_later_attempt(
    env: dict[str, str], replicas: Replicas
) -> None:
    """One task cancelled on B while A runs it, one on A itself, one on B while A
    is paused (it cannot answer): all end cancelled and never run again."""
    a, b = replicas.pair(env)
    running = await create_task(a, "durable_work", n=4, seconds=60.0)
    paused = await create_task(a, "durable_work", n=5, seconds=60.0)
    here = await create_task(a, "durable_work", n=6, seconds=60.0)
    await task_until(b, here, "working")

    _, ack = await rpc(b, "tasks/cancel", running, taskId=running)
    _, ack_here = await rpc(a, "tasks/cancel", here, taskId=here)
    first = await task_until(b, running, "cancelled", "completed", "failed")
    third = await task_until(b, here, "cancelled", "completed", "failed")
    replicas.signal("replica-a", signal.SIGSTOP)
    _, ack_paused = await rpc(b, "tasks/cancel", paused, taskId=paused)
    second = await task_until(b, paused, "cancelled", "completed", "failed")
    replicas.kill("replica-a")
    await trio.sleep(3.0)  # three heartbeats: no later attempt starts

    assert "result" in ack
    assert "result" in ack_paused
    assert "result" in ack_here
    assert "cancelled" == first["status"] == second["status"] == third["status"]
    assert "cancelled" == (await get(b, here))["status"]
    assert "cancelled" == (await get(b, running))["status"]
    assert "cancelled" == (await get(b, paused))["status"]


async def test_a_task_asking_for_input_starts_over_and_asks_again(
    env: dict[str, str], replicas: Replicas
) -> None:
    a, b = replicas.pair(env)
    task_id = await create_task(a, "durable_ask")
    first = await task_until(b, task_id, "input_required")

    replicas.kill("replica-a")
    with trio.fail_after(15):
        while True:
            asking = await get(b, task_id)
            if asking["status"] == "input_required" and set(
                asking["inputRequests"]
            ) != set(first["inputRequests"]):
                break
            await trio.sleep(0.05)
    key = next(iter(asking["inputRequests"]))
    await rpc(b, "tasks/update", task_id, taskId=task_id, inputResponses={key: ALICE})
    done = await task_until(b, task_id, "completed", "failed")

    assert text(done).startswith("Alice@replica-b:")
    assert text(done).endswith("#2")


async def dump_redis(url: str) -> tuple[bytes, dict[bytes, int]]:
    """Every key and value in Redis (SCAN, then the value by its type), and each
    key's remaining time to live in ms."""
    client: coredis.Redis[bytes] = coredis.Redis.from_url(url)
    dump, ttls = b"", {}
    async with client:
        async for key in client.scan_iter():
            kind = await client.type(key)
            if kind == b"hash":
                pairs = await client.hgetall(key)
                value = b" ".join(k + b"=" + v for k, v in pairs.items())
            elif kind == b"zset":
                value = b" ".join(await client.zrange(key, 0, -1))
            elif kind == b"list":
                value = b" ".join(await client.lrange(key, 0, -1))
            else:
                value = await client.get(key) or b""
            dump += key + b" " + value + b"\n"
            ttls[key] = await client.pttl(key)
    return dump, ttls


async def test_redis_holds_no_secret_argument_and_no_token_and_every_key_expires(
    env: dict[str, str], redis_server: RedisServer, replicas: Replicas
) -> None:
    a, b = replicas.pair(env)
    body = request_body(
        "tools/call",
        {"name": "durable_secret", "arguments": {"token": SECRET, "seconds": 2.0}},
        meta=TASK_META,
    )
    sent = {
        **headers("tools/call", "durable_secret"),
        "authorization": f"Bearer {TOKEN}",
        "x-api-key": TOKEN,
    }
    async with httpx.AsyncClient() as client:
        created = (await client.post(a, json=body, headers=sent)).json()
    task_id = created["result"]["taskId"]
    await task_until(b, task_id, "working")

    during, ttls = await dump_redis(redis_server.url)
    replicas.kill("replica-a")
    done = await task_until(b, task_id, "completed", "failed")
    after, ttls_after = await dump_redis(redis_server.url)

    assert task_id.encode() in during
    for dump in (during, after):
        assert SECRET.encode() not in dump
        assert TOKEN.encode() not in dump
    assert text(done) == f"{len(SECRET)}@" + text(done).split("@", 1)[1]
    assert text(done).endswith("#2")
    for key, ttl in {**ttls, **ttls_after}.items():
        assert ttl > 0 or ttl == -2, (key, ttl)  # -2: it went meanwhile


async def test_a_redis_outage_fails_loudly_and_durable_tasks_recover_by_themselves(
    env: dict[str, str], redis_server: RedisServer, replicas: Replicas
) -> None:
    """redis-server paused (SIGSTOP) past the heartbeat: reads answer 503 at once;
    once it continues the task ends with one outcome and new tasks work."""
    a, b = replicas.pair(env)
    task_id = await create_task(a, "durable_work", n=8, seconds=3.0)
    await task_until(b, task_id, "working")
    assert redis_server.process is not None
    pid = redis_server.process.pid

    os.kill(pid, signal.SIGSTOP)
    try:
        with trio.fail_after(5):
            status, during = await rpc(b, "tasks/get", task_id, taskId=task_id)
        await trio.sleep(2.0)
    finally:
        os.kill(pid, signal.SIGCONT)
    done = await task_until(b, task_id, "completed", "failed")
    again = await create_task(b, "durable_work", n=9, seconds=0.1)
    later = await task_until(a, again, "completed", "failed")
    seen = [await get(url, task_id) for url in (a, b)]

    assert (503, -32603) == (status, during["error"]["code"])
    assert "cannot be reached now" in during["error"]["message"]
    assert "completed" == done["status"], done
    assert text(done).startswith("8@")
    assert [done["result"]] * 2 == [view["result"] for view in seen]
    assert text(later).startswith("9@replica-b:")

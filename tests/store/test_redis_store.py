"""``RedisStore``: task records on any replica, and a Redis outage (issue 26).

Two ``trio-mcp serve`` replicas share one real redis-server through
``Server(store=RedisStore(url))``; each test talks to both over HTTP.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio
from support.scale_http import TASK_META, create_task, listening, rpc, task_until
from support.scale_procs import RedisServer, Replicas

from trio_mcp import RateLimit, RedisStore
from trio_mcp._store._redis import lease_size

ALICE = {"action": "accept", "content": {"name": "Alice"}}


@pytest.fixture
def pair(redis_server: RedisServer, replicas: Replicas) -> tuple[str, str]:
    """Replica A's and replica B's URLs; their task store is ``redis_server``."""
    return replicas.pair({"SCALE_STORE_URL": redis_server.url})


async def quick_task(on: str, read_on: str, n: int) -> tuple[str, dict[str, Any]]:
    """Start ``quick`` with ``n`` as a task on ``on``; once ``read_on`` reads it
    completed, its id and that reading."""
    task_id = await create_task(on, "quick", n=n)
    return task_id, await task_until(read_on, task_id, "completed")


async def test_a_task_created_on_a_is_read_and_updated_on_b(
    pair: tuple[str, str],
) -> None:
    a, b = pair

    task_id = await create_task(a, "ask_name")
    asking = await task_until(b, task_id, "input_required")
    key = next(iter(asking["inputRequests"]))
    _, bad = await rpc(
        b,
        "tasks/update",
        task_id,
        taskId=task_id,
        inputResponses={key: {"action": "accept", "content": {}}},
    )
    _, updated = await rpc(
        b, "tasks/update", task_id, taskId=task_id, inputResponses={key: ALICE}
    )
    done = await task_until(b, task_id, "completed", "failed")

    assert -32602 == bad.get("error", {}).get("code"), (bad, asking)
    assert bad["error"]["data"]["problems"][0]["path"].startswith("inputResponses.")
    assert "complete" == updated["result"]["resultType"]
    assert "completed" == done["status"]
    assert done["result"]["structuredContent"].startswith(
        "Alice: task ran on replica-a:"
    )


async def test_cancel_on_b_stops_the_task_running_on_a_and_b_listens(
    pair: tuple[str, str],
) -> None:
    a, b = pair

    task_id = await create_task(a, "wait_cancel")
    async with listening(b, meta=TASK_META, taskIds=[task_id]) as listen:
        _, cancelled = await rpc(b, "tasks/cancel", task_id, taskId=task_id)
        note = await listen.next_or_end()
    on_a = await task_until(a, task_id, "cancelled")

    assert "result" in cancelled
    assert note is not None
    assert "notifications/tasks" == note["method"]
    assert task_id == note["params"]["taskId"]
    assert "cancelled" == note["params"]["status"]
    assert "cancelled" == on_a["status"]


async def test_a_finished_task_is_readable_after_its_worker_was_killed(
    pair: tuple[str, str], replicas: Replicas
) -> None:
    a, b = pair

    task_id, _ = await quick_task(a, a, 5)
    await trio.sleep(0.2)  # the final snapshot is written soon after, not at once
    replicas.kill("replica-a")
    task = await task_until(b, task_id, "completed")
    _, other = await rpc(b, "tasks/get", "nope", taskId="nope")

    assert task["result"]["structuredContent"].startswith("5@replica-a:")
    assert -32602 == other["error"]["code"]


async def test_without_redis_plain_calls_work_and_task_calls_fail_cleanly(
    pair: tuple[str, str], redis_server: RedisServer
) -> None:
    a, b = pair
    task_id, _ = await quick_task(a, b, 1)

    redis_server.stop()
    with trio.fail_after(5):
        plain_status, plain = await rpc(b, "tools/call", "whoami", name="whoami")
        task_status, refused = await rpc(
            a, "tools/call", "quick", name="quick", arguments={"n": 2}
        )
        get_status, unreadable = await rpc(b, "tasks/get", task_id, taskId=task_id)
    redis_server.start()
    _, again = await quick_task(a, b, 3)

    assert 200 == plain_status
    assert plain["result"]["structuredContent"].startswith("replica-b:")
    assert (503, -32603) == (task_status, refused["error"]["code"])
    assert "cannot be reached now" in refused["error"]["message"]
    assert (503, -32603) == (get_status, unreadable["error"]["code"])
    assert again["result"]["structuredContent"].startswith("3@replica-a:")


async def test_the_rate_limit_is_one_bucket_across_replicas_with_metrics(
    redis_server: RedisServer, replicas: Replicas
) -> None:
    """``trio-mcp serve --rate-limit 3/60 --metrics-path /metrics`` on two replicas
    sharing a RedisStore: the third call is the last one, whichever replica takes it."""
    env = {"SCALE_STORE_URL": redis_server.url}
    flags = ("--rate-limit", "3/60", "--metrics-path", "/metrics")
    a = replicas.start("replica-a", *flags, env=env).url
    b = replicas.start("replica-b", *flags, env=env).url

    statuses = [
        (await rpc(url, "tools/call", "whoami", name="whoami"))[0]
        for url in (a, b, a, b, a)
    ]
    async with httpx.AsyncClient() as client:
        scraped = (await client.get(a.removesuffix("/mcp") + "/metrics")).text

    assert [200, 200, 200, 429, 429] == statuses
    assert (
        'trio_mcp_server_rate_limited_total{mcp_method_name="tools/call"} 1.0'
        in scraped
    )


def test_a_bad_rate_limit_flag_is_refused_before_serving(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "trio_mcp",
            "serve",
            "x.py:server",
            "--rate-limit",
            "60",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=tmp_path,
    )

    assert 0 != done.returncode
    assert "--rate-limit 60: write it as CALLS/SECONDS, e.g. 120/60" in done.stderr


async def test_leased_tokens_never_exceed_the_shared_bucket(
    redis_server: RedisServer,
) -> None:
    """Two stores (two processes) take from one bucket of 80 in leases of 10: the
    calls allowed never pass 80, and at most a lease less one per store is lost."""
    limit = RateLimit(80, 3600)
    one = RedisStore(redis_server.url)
    two = RedisStore(redis_server.url)
    allowed = 0
    async with one.running(), two.running():
        for n in range(200):
            store = one if n % 3 else two
            allowed += await store.take("caller", limit) == 0
        refused_wait = await one.take("caller", limit)

    assert 10 == lease_size(limit)
    assert 80 - 2 * 9 <= allowed <= 80
    assert 0 < refused_wait <= 3600 / 80


async def test_an_unfinished_task_of_a_killed_replica_reads_as_failed(
    pair: tuple[str, str], replicas: Replicas
) -> None:
    """The replicas' heartbeat lasts 1 s here (scale_server.py): once A's has run
    out, B shows A's running task as failed instead of working until its TTL."""
    a, b = pair
    task_id = await create_task(a, "wait_cancel")
    working = await task_until(b, task_id, "working")

    replicas.kill("replica-a")
    failed = await task_until(b, task_id, "failed")
    _, cancelled = await rpc(b, "tasks/cancel", task_id, taskId=task_id)

    assert "working" == working["status"]
    assert (
        "the process running this task stopped before the task finished"
        == (failed["statusMessage"])
    )
    assert -32603 == failed["error"]["code"]
    assert "result" in cancelled

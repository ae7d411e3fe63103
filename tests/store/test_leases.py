"""Task leases and fencing numbers (``_store/_leases.py``) against a model, on a real
redis-server: whatever order attempts write, claim, renew, release and cancel in,
only the attempt holding the task's current fence ever changes its record, and a
finished task never changes again (issue 43).
"""

from __future__ import annotations

import json
import secrets
import shutil
from collections.abc import Iterator
from typing import Any

import attrs
import pytest
import trio
from hypothesis import given, settings
from hypothesis import strategies as st
from support.scale_procs import RedisServer

from trio_mcp import RedisStore
from trio_mcp._json import JsonValue
from trio_mcp._store._leases import Start
from trio_mcp._store._redis import TaskWrite

TOOL = "work"


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    """One redis-server for the module (each example uses its own task id)."""
    executable = shutil.which("redis-server")
    assert executable is not None, "run 'bash scripts/bootstrap' for redis-server"
    server = RedisServer(executable)
    server.start()
    try:
        yield server.url
    finally:
        server.stop()


@attrs.define
class Model:
    """What the task's record must be after each step."""

    fence: int = 1
    version: int = 1
    attempts: int = 1
    terminal: bool = False
    cancelled: bool = False
    snapshot: str = ""


# One step: (operation, how many fences behind the current one the attempt is, n).
steps = st.lists(
    st.tuples(
        st.sampled_from(["save", "finish", "claim", "renew", "release", "cancel"]),
        st.integers(0, 2),
        st.integers(0, 4),
    ),
    max_size=25,
)


async def run_step(
    store: RedisStore, task_id: str, model: Model, step: tuple[str, int, int]
) -> None:
    """Do ``step`` in Redis and in the model; check both agree on its answer."""
    op, behind, n = step
    fence = model.fence - behind
    current = behind == 0 and not model.terminal
    if op in ("save", "finish"):
        version = model.version + n - 1  # n == 0: an older version, 1: the same
        body: dict[str, JsonValue] = {"step": secrets.token_hex(4)}
        terminal = op == "finish"
        write = TaskWrite.of(body, version, 60_000, fence, terminal=terminal)
        written = await store.save_task(task_id, write)
        assert written is current  # an older version of the current attempt: kept
        if current and version > model.version:
            model.version, model.terminal = version, terminal
            model.snapshot = json.dumps(body)
    elif op == "claim":
        await trio.sleep(0.003)  # the 1 ms lease has run out
        claims = await store.leases.claim([TOOL])
        mine = [c for c in claims if c.task_id == task_id]
        assert bool(mine) is (not model.terminal)
        if mine:
            kind = "cancelled" if model.cancelled else "resume"
            assert kind == mine[0].kind
            model.fence += 1
            model.version = 0
            model.attempts += kind == "resume"
            assert (model.fence, model.attempts) == (mine[0].fence, mine[0].attempts)
    elif op == "renew":
        lost = await store.leases.renew({task_id: fence})
        assert (task_id in lost) is not current
    elif op == "release":
        assert await store.leases.release(task_id, fence) is current
    else:
        marked = await store.leases.mark_cancelled(task_id)
        assert marked is (not model.terminal)
        model.cancelled = model.cancelled or marked


async def record_of(store: RedisStore, task_id: str) -> dict[str, Any]:
    client = store._redis.client
    assert client is not None
    raw = await client.hgetall(store.leases.task_key(task_id))
    return {k.decode(): v.decode() for k, v in raw.items()}


@settings(max_examples=60, deadline=None)
@given(script=steps)
async def test_only_the_current_fence_writes_and_a_finished_task_never_changes(
    redis_url: str, script: list[tuple[str, int, int]]
) -> None:
    store = RedisStore(redis_url, prefix=f"lease-{secrets.token_hex(4)}")
    store.leases.lease_ms = 1
    task_id = secrets.token_urlsafe(9)
    first = json.dumps({"step": "created"})
    model = Model(snapshot=first)
    async with store.running():
        start = Start(True, TOOL, 1_000, "sealed", 60_000)
        await store.leases.create(task_id, first, "{}", 60_000, start)
        for step in script:
            finished = model.snapshot if model.terminal else None
            await run_step(store, task_id, model, step)
            record = await record_of(store, task_id)
            assert model.snapshot == record["snapshot"], step
            assert str(model.fence) == record["fence"]
            assert ("1" if model.terminal else "0") == record["terminal"]
            if finished is not None:
                assert finished == record["snapshot"]


@pytest.mark.parametrize(
    ("durable", "max_attempts", "ttl_ms", "kind"),
    [
        (False, 3, 60_000, "orphaned"),
        (True, 1, 60_000, "exhausted"),
        (True, 3, 1, "ttl"),
        (True, 3, 60_000, "resume"),
    ],
)
async def test_what_a_claim_does_with_a_task_whose_lease_ran_out(
    redis_url: str, durable: bool, max_attempts: int, ttl_ms: int, kind: str
) -> None:
    store = RedisStore(redis_url, prefix=f"kinds-{secrets.token_hex(4)}")
    store.leases.lease_ms = 1
    async with store.running():
        start = Start(durable, TOOL, max_attempts, "sealed", ttl_ms)
        await store.leases.create("t", "{}", "{}", 60_000, start)
        await trio.sleep(0.01)
        store.leases.lease_ms = 60_000  # the claimer's own lease
        [claim] = await store.leases.claim([TOOL])
        again = await store.leases.claim([TOOL], "t")

    assert (kind, 2) == (claim.kind, claim.fence)
    assert ("sealed" if kind == "resume" else "") == claim.start
    assert [] == again  # the claimer holds it now


async def test_a_task_no_one_here_declares_is_looked_at_again_a_third_of_a_lease_later(
    redis_url: str,
) -> None:
    """A bounded scan never sticks on tasks this process cannot run: each is pushed
    a third of a lease ahead, and claimed by a process that declares its tool."""
    store = RedisStore(redis_url, prefix=f"skip-{secrets.token_hex(4)}")
    store.leases.lease_ms = 300
    async with store.running():
        start = Start(True, "elsewhere", 3, "sealed", 60_000)
        await store.leases.create("t", "{}", "{}", 60_000, start)
        await trio.sleep(0.35)
        skipped = await store.leases.claim([TOOL], batch=1)
        at_once = await store.leases.claim(["elsewhere"])
        await trio.sleep(0.15)
        later = await store.leases.claim(["elsewhere"])

    assert [] == skipped
    assert [] == at_once
    assert ["resume"] == [c.kind for c in later]

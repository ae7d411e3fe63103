"""Chaos soak of durable tasks: N tasks on 3 replicas while one replica at a time is
killed (SIGKILL, or SIGTERM) and restarted, in a bounded loop (issue 43;
docs/deploy.md).

    .venv/bin/python bench/durable_soak.py [--tasks 60] [--kills 8] [--heartbeat 1.0]
        [--stop kill|term]

A redis-server and three ``trio-mcp serve`` replicas of ``bench/durable_server.py``
are started here on 127.0.0.1 (free ports) and stopped by PID. The tasks (``job``,
durable, each a few seconds long) are created on the replicas in turn at a steady
rate while, every ``--period`` seconds, the next replica is killed (``--stop``) and
restarted ``--restart-after`` seconds later on the same port. Meanwhile the task
hashes in Redis are read every 50 ms, so the time from a kill to the claim of each
task the killed replica held is measured; ``tasks/get`` is polled on whichever
replica answers until every task has finished, then each task is read on all
three replicas.

Printed: tasks completed, lost (not completed: failed, unknown or still running at
the time limit) and duplicated outcomes (a task seen with more than one outcome, on
any replica at any time), which must both be 0; the attempts the tasks took; and
the time to resume after a kill (median, max) against the heartbeat. Bounded: at
most ``--kills`` kills and ``--time-limit`` seconds.
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import attrs
import coredis
import httpx
import trio
from production import body, headers
from scale import free_port, start_redis, stop, wait_for

ROOT = Path(__file__).resolve().parent.parent
TARGET = f"{ROOT / 'bench' / 'durable_server.py'}:server"
KEY = "durable-soak-shared-state-key-0123456789"
TERMINAL = ("completed", "failed", "cancelled")


@attrs.define
class Replica:
    name: str
    port: int
    env: dict[str, str]
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    @property
    def holder(self) -> str:
        """How the task hashes name this process (``RedisStore.name``'s start)."""
        assert self.process is not None
        return f"{self.name}:{self.process.pid}/"

    def start(self) -> None:
        command = [sys.executable, "-m", "trio_mcp", "serve", TARGET]
        self.process = subprocess.Popen(
            [*command, "--port", str(self.port)],
            env={**self.env, "TRIO_MCP_INSTANCE": self.name},
            stderr=subprocess.DEVNULL,
        )
        wait_for(self.port, self.process)

    def kill(self, how: int) -> None:
        """Send ``how`` (SIGKILL, or SIGTERM for a graceful stop) and wait for the
        process to exit."""
        assert self.process is not None
        os.kill(self.process.pid, how)
        self.process.wait()


@attrs.define
class Soak:
    replicas: list[Replica]
    redis_url: str
    prefix: str = "trio-mcp"
    tasks: list[str] = attrs.field(factory=list)
    outcomes: dict[str, set[str]] = attrs.field(factory=dict)
    status: dict[str, str] = attrs.field(factory=dict)
    attempts: dict[str, int] = attrs.field(factory=dict)
    resumes: list[float] = attrs.field(factory=list)
    unclaimed: int = 0
    produced: bool = False
    watching: dict[str, tuple[float, str]] = attrs.field(factory=dict)
    """Task id -> (when its holder was killed, that holder), until claimed."""

    async def rpc(self, url: str, method: str, **params: Any) -> dict[str, Any]:
        name = params.get("name", params.get("taskId"))
        fields = {**headers(method, str(name)), "connection": "close"}
        async with httpx.AsyncClient(timeout=5) as client:
            reply = await client.post(url, json=body(method, **params), headers=fields)
        message: dict[str, Any] = reply.json()
        return message

    async def create(self, n: int, ms: int) -> None:
        """Create task ``n`` on the next replica that answers."""
        for k in range(len(self.replicas)):
            url = self.replicas[(n + k) % len(self.replicas)].url
            try:
                message = await self.rpc(
                    url, "tools/call", name="job", arguments={"n": n, "ms": ms}
                )
            except (httpx.HTTPError, ValueError):
                continue  # killed a moment ago
            if "result" in message:
                self.tasks.append(message["result"]["taskId"])
                return

    async def produce(self, args: argparse.Namespace) -> None:
        """Create the tasks at a steady rate over the chaos, so every kill finds
        tasks running on its victim."""
        spread = args.kills * (args.period + args.restart_after)
        for n in range(args.tasks):
            await self.create(n, random.randint(args.min_ms, args.max_ms))
            await trio.sleep(spread / args.tasks)
        self.produced = True

    def note(self, task_id: str, view: dict[str, Any]) -> None:
        """Keep what a read showed of a finished task (every distinct outcome)."""
        status = view.get("status", "?")
        self.status[task_id] = status
        if status in TERMINAL:
            said = view.get("result", {}).get("structuredContent") or view.get("error")
            self.outcomes.setdefault(task_id, set()).add(f"{status}:{said}")

    async def read_anywhere(self, task_id: str) -> None:
        for replica in random.sample(self.replicas, len(self.replicas)):
            try:
                message = await self.rpc(replica.url, "tasks/get", taskId=task_id)
            except (httpx.HTTPError, ValueError):
                continue
            if "result" in message:
                self.note(task_id, message["result"])
            return

    async def poll(self, until: float) -> None:
        """Read every unfinished task (and a sample of finished ones) until all
        have finished or ``until``."""
        while trio.current_time() < until:
            pending = [t for t in self.tasks if self.status.get(t) not in TERMINAL]
            finished = [t for t in self.tasks if t not in pending]
            sample = random.sample(finished, min(5, len(finished)))
            for task_id in pending + sample:
                await self.read_anywhere(task_id)
            if not pending and self.produced:
                return
            await trio.sleep(0.2)

    async def watch(self, client: coredis.Redis[bytes]) -> None:
        """Time each claim of a task whose holder was killed."""
        while True:
            for task_id, (killed_at, holder) in list(self.watching.items()):
                key = f"{self.prefix}:task:{task_id}"
                now_holder, terminal = await client.hmget(key, ["holder", "terminal"])
                if terminal == b"1" or (
                    now_holder is not None
                    and not now_holder.decode().startswith(holder)
                ):
                    if terminal != b"1":
                        self.resumes.append(trio.current_time() - killed_at)
                    del self.watching[task_id]
            await trio.sleep(0.05)

    async def chaos(
        self,
        client: coredis.Redis[bytes],
        kills: int,
        period: float,
        restart: float,
        how: int,
    ) -> None:
        for k in range(kills):
            await trio.sleep(period)
            victim = self.replicas[k % len(self.replicas)]
            holder = victim.holder
            held = []
            for task_id in self.tasks:
                value = await client.hget(f"{self.prefix}:task:{task_id}", "holder")
                terminal = await client.hget(
                    f"{self.prefix}:task:{task_id}", "terminal"
                )
                if (
                    value is not None
                    and value.decode().startswith(holder)
                    and terminal != b"1"
                ):
                    held.append(task_id)
            killed_at = trio.current_time()
            for task_id in held:
                self.watching[task_id] = (killed_at, holder)
            await trio.to_thread.run_sync(victim.kill, how)
            print(
                f"  {signal.Signals(how).name} {k + 1}: {victim.name} (it held "
                f"{len(held)} unfinished tasks)"
            )
            await trio.sleep(restart)
            await trio.to_thread.run_sync(victim.start)

    async def run(self, args: argparse.Namespace) -> None:
        client: coredis.Redis[bytes] = coredis.Redis.from_url(self.redis_url)
        deadline = trio.current_time() + args.time_limit
        async with client, trio.open_nursery() as nursery:
            nursery.start_soon(self.watch, client)
            with trio.move_on_at(deadline):
                async with trio.open_nursery() as inner:
                    inner.start_soon(self.produce, args)
                    inner.start_soon(self.poll, deadline)
                    await trio.sleep(args.period / 2)
                    how = signal.SIGTERM if args.stop == "term" else signal.SIGKILL
                    await self.chaos(
                        client, args.kills, args.period, args.restart_after, how
                    )
            await self.poll(deadline)
            self.unclaimed = len(self.watching)
            nursery.cancel_scope.cancel()
        for task_id in self.tasks:  # every replica, once more
            for replica in self.replicas:
                message = await self.rpc(replica.url, "tasks/get", taskId=task_id)
                if "result" in message:
                    self.note(task_id, message["result"])
                    said = (
                        message["result"].get("result", {}).get("structuredContent", "")
                    )
                    if isinstance(said, str) and "#" in said:
                        self.attempts[task_id] = int(said.rsplit("#", 1)[1])

    def report(self, args: argparse.Namespace, seconds: float) -> None:
        completed = sum(
            1
            for t in self.tasks
            if self.status.get(t) == "completed" and len(self.outcomes.get(t, ())) == 1
        )
        lost = sum(1 for t in self.tasks if self.status.get(t) != "completed")
        duplicated = sum(1 for t in self.tasks if len(self.outcomes.get(t, ())) > 1)
        attempts = collections.Counter(self.attempts.values())
        print()
        print(f"| durable soak: {args.tasks} tasks, 3 replicas, {args.kills} kills | |")
        print("|---|---|")
        print(f"| heartbeat | {args.heartbeat:g} s |")
        print(f"| replicas stopped by | SIG{args.stop.upper()} |")
        print(f"| tasks completed | {completed} of {args.tasks} |")
        print(f"| lost | {lost} |")
        print(f"| duplicated outcomes | {duplicated} |")
        print(f"| attempts per task | {dict(sorted(attempts.items()))} |")
        if self.resumes:
            print(
                f"| time to resume after a kill | median {statistics.median(self.resumes):.2f} s,"
                f" max {max(self.resumes):.2f} s over {len(self.resumes)} claims"
                f" ({statistics.median(self.resumes) / args.heartbeat:.2f} x and"
                f" {max(self.resumes) / args.heartbeat:.2f} x the heartbeat) |"
            )
        print(f"| killed tasks never claimed | {self.unclaimed} |")
        print(f"| wall time | {seconds:.1f} s |")
        if lost or duplicated:
            sys.exit("soak: a task was lost or had two outcomes")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=60)
    parser.add_argument("--kills", type=int, default=8)
    parser.add_argument(
        "--period", type=float, default=4.0, help="seconds between kills"
    )
    parser.add_argument("--restart-after", type=float, default=1.0)
    parser.add_argument(
        "--stop",
        choices=["kill", "term"],
        default="kill",
        help="SIGKILL (the default) or SIGTERM, a graceful stop",
    )
    parser.add_argument("--heartbeat", type=float, default=1.0)
    parser.add_argument("--min-ms", type=int, default=3_000)
    parser.add_argument("--max-ms", type=int, default=15_000)
    parser.add_argument("--time-limit", type=float, default=240.0)
    args = parser.parse_args()
    redis, redis_url = start_redis()
    env = {
        **os.environ,
        "DURABLE_SOAK_REDIS": redis_url,
        "DURABLE_SOAK_HEARTBEAT": str(args.heartbeat),
        "TRIO_MCP_STATE_KEY": KEY,
    }
    replicas = [Replica(f"replica-{i}", free_port(), env) for i in range(3)]
    try:
        for replica in replicas:
            replica.start()
        soak = Soak(replicas, redis_url)
        started = time.monotonic()
        trio.run(soak.run, args)
        soak.report(args, time.monotonic() - started)
    finally:
        for replica in replicas:
            if replica.process is not None:
                stop(replica.process)
        stop(redis)


if __name__ == "__main__":
    main()

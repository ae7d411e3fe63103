"""Production load: 2 replicas x 2 workers sharing Redis, clients at twice capacity.

    .venv/bin/python bench/production.py [--duration 60] [--clients N]

A redis-server and two ``trio-mcp serve bench/prod_server.py:server --workers 2``
replicas start here on free 127.0.0.1 ports, with ``--max-concurrent``,
``--max-waiting``, ``--rate-limit`` (per client: each client sends its own
``X-Forwarded-For`` and the replicas trust 127.0.0.1 as their proxy) and
``--metrics-path``. Capacity is every process's running and waiting places
(2 x 2 x (max_concurrent + max_waiting)); the default client count is twice that.
Each client, for ``--duration`` seconds, calls ``work`` (a 20 ms call) on a random
replica, and with probability ``--task-share`` runs ``job`` as a task instead: created
on one replica and polled with ``tasks/get`` on the other until it completes. Every
task result is checked against the number it was given: a task never seen to finish
within 30 s is lost, a task id or answer seen twice is duplicated.

Printed as a Markdown table: throughput, p50/p99 of the calls answered 200, busy
(503) and limited (429) answers, other failures, the servers' and Redis's RSS, and
the task counts. Every process is stopped by PID. Figures, not a test: the machine
is shared, and the clients run on the same cores as the servers.
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import attrs
import httpx
import trio
from scale import free_port, start_redis, stop, wait_for

ROOT = Path(__file__).resolve().parent
TARGET = f"{ROOT / 'prod_server.py'}:server"
STATE_KEY = "production-bench-state-key-0123456789abcdef"
META: dict[str, Any] = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {
        "extensions": {"io.modelcontextprotocol/tasks": {}}
    },
}
TASK_WAIT = 30.0
SETTLE = 5.0


def rss_kib(pid: int) -> int:
    """The resident set of ``pid`` and all its descendants, in KiB."""
    total = 0
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            status = (proc / "status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if int(proc.name) == pid or _descends(int(proc.name), pid):
            total += int(fields.get("VmRSS", "0 kB").split()[0])
    return total


def _descends(pid: int, ancestor: int) -> bool:
    for _ in range(8):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return False
        pid = int(stat.rpartition(")")[2].split()[1])
        if pid == ancestor:
            return True
        if pid <= 1:
            return False
    return False


@attrs.define
class Tally:
    ok: int = 0
    busy: int = 0
    limited: int = 0
    failed: int = 0
    failures: dict[str, int] = attrs.field(factory=dict)
    latencies: list[float] = attrs.field(factory=list)
    tasks_created: int = 0
    tasks_completed: int = 0
    tasks_failed: int = 0
    tasks_lost: int = 0
    duplicates: int = 0
    task_ids: set[str] = attrs.field(factory=set)
    answers: set[int] = attrs.field(factory=set)

    def count(self, status: int) -> None:
        if status == 200:
            self.ok += 1
        elif status == 503:
            self.busy += 1
        elif status == 429:
            self.limited += 1
        else:
            self.fail(f"HTTP {status}")

    def fail(self, why: str) -> None:
        self.failed += 1
        self.failures[why] = self.failures.get(why, 0) + 1


def body(method: str, **params: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": method,
        "params": {"_meta": META, **params},
    }


def headers(method: str, name: str) -> dict[str, str]:
    return {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": method,
        "mcp-name": name,
    }


@attrs.define
class Load:
    urls: list[str]
    args: argparse.Namespace
    tally: Tally
    deadline: float
    numbers: itertools.count[int] = attrs.field(factory=itertools.count)

    async def client(self, index: int) -> None:
        address = f"10.{index // 250}.{index % 250}.1"
        async with httpx.AsyncClient(
            timeout=TASK_WAIT, headers={"x-forwarded-for": address}
        ) as client:
            while trio.current_time() < self.deadline:
                first, second = random.sample(self.urls, 2)
                if random.random() < self.args.task_share:
                    await self.task(client, first, second)
                else:
                    await self.call(client, first)

    async def call(self, client: httpx.AsyncClient, url: str) -> None:
        started = time.perf_counter()
        params = {"name": "work", "arguments": {"ms": self.args.work_ms}}
        try:
            response = await client.post(
                url,
                json=body("tools/call", **params),
                headers=headers("tools/call", "work"),
            )
        except httpx.HTTPError as exc:
            self.tally.fail(type(exc).__name__)
            return
        self.tally.count(response.status_code)
        if response.status_code == 200:
            self.tally.latencies.append(time.perf_counter() - started)
        else:
            await trio.sleep(float(response.headers.get("retry-after", "1")) / 10)

    async def task(
        self, client: httpx.AsyncClient, create_on: str, poll_on: str
    ) -> None:
        n = next(self.numbers)
        params = {"name": "job", "arguments": {"n": n, "ms": self.args.work_ms}}
        try:
            response = await client.post(
                create_on,
                json=body("tools/call", **params),
                headers=headers("tools/call", "job"),
            )
        except httpx.HTTPError as exc:
            self.tally.fail(type(exc).__name__)
            return
        self.tally.count(response.status_code)
        if response.status_code != 200:
            return
        task_id = response.json()["result"]["taskId"]
        if task_id in self.tally.task_ids:
            self.tally.duplicates += 1
        self.tally.task_ids.add(task_id)
        self.tally.tasks_created += 1
        await self.follow(client, poll_on, task_id, n)

    async def follow(
        self, client: httpx.AsyncClient, url: str, task_id: str, n: int
    ) -> None:
        with trio.move_on_after(TASK_WAIT):
            while True:
                await trio.sleep(0.1)
                try:
                    response = await client.post(
                        url,
                        json=body("tasks/get", taskId=task_id),
                        headers=headers("tasks/get", task_id),
                    )
                except httpx.HTTPError:
                    continue
                task = response.json().get("result", {})
                if task.get("status") == "completed":
                    answer = task["result"]["structuredContent"]
                    answer = (
                        answer.get("result") if isinstance(answer, dict) else answer
                    )
                    if answer != n or n in self.tally.answers:
                        self.tally.duplicates += 1
                    self.tally.answers.add(n)
                    self.tally.tasks_completed += 1
                    return
                if task.get("status") in ("failed", "cancelled"):
                    self.tally.tasks_failed += 1
                    return
        self.tally.tasks_lost += 1


def start_all(
    args: argparse.Namespace,
) -> tuple[subprocess.Popen[bytes], list[subprocess.Popen[bytes]], list[int]]:
    redis_proc, redis_url = start_redis()
    env = {
        **os.environ,
        "PROD_BENCH_REDIS": redis_url,
        "TRIO_MCP_STATE_KEY": STATE_KEY,
        "TRIO_MCP_LOG_LEVEL": "error",
    }
    replicas, ports = [], []
    for _ in range(2):
        port = free_port()
        command = [
            sys.executable, "-m", "trio_mcp", "serve", TARGET, "--port", str(port),
            "--workers", "2",
            "--max-concurrent", str(args.max_concurrent),
            "--max-waiting", str(args.max_waiting),
            "--rate-limit", args.rate_limit,
            "--trusted-proxy", "127.0.0.1",
            "--metrics-path", "/metrics",
        ]  # fmt: skip
        process = subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL)
        replicas.append(process)
        ports.append(port)
        wait_for(port, process)
    return redis_proc, replicas, ports


async def run(args: argparse.Namespace, urls: list[str]) -> Tally:
    tally = Tally()
    load = Load(urls, args, tally, trio.current_time() + args.duration)
    async with trio.open_nursery() as nursery:
        for index in range(args.clients):
            nursery.start_soon(load.client, index)
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--clients", type=int, default=None)
    parser.add_argument("--max-concurrent", type=int, default=4)
    parser.add_argument("--max-waiting", type=int, default=4)
    parser.add_argument("--rate-limit", default="1/1", help="per client")
    parser.add_argument("--work-ms", type=int, default=20)
    parser.add_argument("--task-share", type=float, default=0.2)
    args = parser.parse_args()
    capacity = 2 * 2 * (args.max_concurrent + args.max_waiting)
    args.clients = min(args.clients or 2 * capacity, 1000)
    load_before = os.getloadavg()[0]
    redis, replicas, ports = start_all(args)
    try:
        time.sleep(SETTLE)
        urls = [f"http://127.0.0.1:{port}/mcp" for port in ports]
        started = time.monotonic()
        tally = trio.run(run, args, urls)
        elapsed = time.monotonic() - started
        servers = [rss_kib(p.pid) for p in replicas]
        redis_rss = rss_kib(redis.pid)
    finally:
        for process in (*replicas, redis):
            stop(process)
    report(args, tally, elapsed, servers, redis_rss, load_before, capacity)


def report(
    args: argparse.Namespace,
    tally: Tally,
    elapsed: float,
    servers: list[int],
    redis_rss: int,
    load_before: float,
    capacity: int,
) -> None:
    latencies = sorted(tally.latencies)
    p50 = statistics.median(latencies) * 1000 if latencies else float("nan")
    p99 = latencies[int(len(latencies) * 0.99)] * 1000 if latencies else float("nan")
    answered = tally.ok + tally.busy + tally.limited + tally.failed
    rows = [
        ("clients / capacity", f"{args.clients} / {capacity} (2 replicas x 2 workers x ({args.max_concurrent} running + {args.max_waiting} waiting))"),
        ("duration", f"{elapsed:.1f} s (tasks still running at the end are followed to completion)"),
        ("calls answered", f"{answered} ({answered / elapsed:.0f}/s)"),
        ("200 ok", f"{tally.ok} ({tally.ok / elapsed:.0f}/s)"),
        ("p50 / p99 of 200s", f"{p50:.1f} ms / {p99:.1f} ms (work takes {args.work_ms} ms)"),
        ("503 busy", str(tally.busy)),
        ("429 limited", f"{tally.limited} (rate limit {args.rate_limit} per client)"),
        ("other failures", f"{tally.failed} {tally.failures or ''}"),
        ("tasks created / completed / failed", f"{tally.tasks_created} / {tally.tasks_completed} / {tally.tasks_failed}"),
        ("tasks lost / duplicated", f"{tally.tasks_lost} / {tally.duplicates}"),
        ("RSS per replica (2 workers + supervisor)", " / ".join(f"{kib / 1024:.0f} MiB" for kib in servers)),
        ("RSS redis-server", f"{redis_rss / 1024:.0f} MiB"),
        ("load average before / after", f"{load_before:.1f} / {os.getloadavg()[0]:.1f}"),
    ]  # fmt: skip
    print("| measure | value |\n| --- | --- |")
    for name, value in rows:
        print(f"| {name} | {value} |")


if __name__ == "__main__":
    main()

"""The trial that chose RedisBroadcast's client: coredis on anyio vs redis-py in threads.

    .venv/bin/pip install redis   # redis-py is not a dependency; only this trial uses it
    .venv/bin/python bench/redis_clients.py

Under Trio, for each client: 2,000 publications through a real redis-server, each
received by a subscriber in the same run, timed, while a 1 ms ticker records the
worst delay of the event loop; then the server is stopped and the time until the
subscriber notices is printed. A redis-server is started on a free port on
127.0.0.1 for each client and stopped by PID. Figures, not a test.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import trio

N = 2000


def start_redis() -> tuple[subprocess.Popen[bytes], int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    process = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", ""],
        stdout=subprocess.DEVNULL,
    )
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), 0.1).close()
            return process, port
        except OSError:
            time.sleep(0.05)
    sys.exit("redis-server did not start")


async def ticker(delays: list[float]) -> None:
    while True:
        before = trio.current_time()
        await trio.sleep(0.001)
        delays.append(trio.current_time() - before - 0.001)


async def coredis_trial(port: int, process: subprocess.Popen[bytes]) -> str:
    import coredis
    from coredis.retry import NoRetryPolicy

    client: coredis.Redis[bytes] = coredis.Redis(host="127.0.0.1", port=port)
    got, done, delays = 0, trio.Event(), list[float]()
    async with (
        client,
        client.pubsub(
            channels=["c"], ignore_subscribe_messages=True, retry_policy=NoRetryPolicy()
        ) as pubsub,
        trio.open_nursery() as nursery,
    ):
        nursery.start_soon(ticker, delays)

        async def reader() -> None:
            nonlocal got
            async for _ in pubsub:
                got += 1
                if got == N:
                    done.set()

        nursery.start_soon(reader)
        start = time.perf_counter()
        for i in range(N):
            await client.publish("c", b"%d" % i)
        with trio.fail_after(30):
            await done.wait()
        took = time.perf_counter() - start
        nursery.cancel_scope.cancel()
    noticed = await notice(process, lambda: _coredis_listen(port), "coredis subscriber")
    return f"{N / took:.0f}/s, worst loop delay {max(delays) * 1000:.1f} ms, {noticed}"


async def _coredis_listen(port: int) -> None:
    import coredis
    from coredis.retry import NoRetryPolicy

    client: coredis.Redis[bytes] = coredis.Redis(host="127.0.0.1", port=port)
    async with (
        client,
        client.pubsub(
            channels=["c"], ignore_subscribe_messages=True, retry_policy=NoRetryPolicy()
        ) as pubsub,
    ):
        async for _ in pubsub:
            pass


async def redispy_trial(port: int, process: subprocess.Popen[bytes]) -> str:
    import redis

    client = redis.Redis(host="127.0.0.1", port=port)
    pubsub = client.pubsub(ignore_subscribe_messages=True)
    await trio.to_thread.run_sync(pubsub.subscribe, "c")
    got, done, delays = 0, trio.Event(), list[float]()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(ticker, delays)

        async def reader() -> None:
            nonlocal got
            while got < N:
                if await trio.to_thread.run_sync(pubsub.get_message, True, 0.5):
                    got += 1
            done.set()

        nursery.start_soon(reader)
        start = time.perf_counter()
        for i in range(N):
            await trio.to_thread.run_sync(client.publish, "c", b"%d" % i)
        with trio.fail_after(30):
            await done.wait()
        took = time.perf_counter() - start
        nursery.cancel_scope.cancel()
    pubsub.close()
    client.close()
    noticed = await notice(
        process, lambda: _redispy_listen(port), "redis-py subscriber"
    )
    return f"{N / took:.0f}/s, worst loop delay {max(delays) * 1000:.1f} ms, {noticed}"


async def _redispy_listen(port: int) -> None:
    import redis

    client = redis.Redis(host="127.0.0.1", port=port)
    pubsub = client.pubsub(ignore_subscribe_messages=True)
    await trio.to_thread.run_sync(pubsub.subscribe, "c")
    while True:
        await trio.to_thread.run_sync(pubsub.get_message, True, 0.5)


async def notice(
    process: subprocess.Popen[bytes], listen: Callable[[], Awaitable[Any]], what: str
) -> str:
    """Stop Redis under a subscriber; return how long it took to notice."""
    async with trio.open_nursery() as nursery:
        failed = trio.Event()

        async def run() -> None:
            try:
                await listen()
            except Exception:
                failed.set()

        nursery.start_soon(run)
        await trio.sleep(0.5)
        start = time.perf_counter()
        os.kill(process.pid, signal.SIGTERM)
        with trio.move_on_after(20):
            await failed.wait()
        nursery.cancel_scope.cancel()
    if not failed.is_set():
        return f"{what} noticed nothing within 20 s"
    return f"outage noticed after {time.perf_counter() - start:.2f} s"


async def main() -> None:
    trials = {
        "coredis (anyio on Trio)": coredis_trial,
        "redis-py (threads)": redispy_trial,
    }
    for name, trial in trials.items():
        process, port = start_redis()
        try:
            print(f"{name}: {await trial(port, process)}")
        finally:
            if process.poll() is None:
                os.kill(process.pid, signal.SIGTERM)
            process.wait()


if __name__ == "__main__":
    trio.run(main)

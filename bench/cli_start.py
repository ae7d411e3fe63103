"""Time what a host waits for: ``trio-mcp run`` started until its first reply.

    .venv/bin/python bench/cli_start.py [--rounds 5]

A host (Claude Desktop, Cursor, ...) starts the command ``trio-mcp install`` wrote and
sends its first request at once; this measures process start, import, loading the
target and the reply to ``tools/list``, for a plain Server and for a lifespan, and
``trio-mcp check`` for comparison. Prints the best and the median of the rounds in
milliseconds (noise on a shared machine only slows a round down).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
LIST = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
                   "params": {"_meta": META}}) + "\n"  # fmt: skip


def _first_reply(argv: list[str], env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True, env=env)  # fmt: skip
    assert process.stdin is not None
    assert process.stdout is not None
    process.stdin.write(LIST)
    process.stdin.flush()
    line = process.stdout.readline()
    took = time.perf_counter() - start
    process.stdin.close()
    process.wait(timeout=30)
    assert json.loads(line)["id"] == 1, line
    return took


def _finished(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, capture_output=True, check=True, timeout=60)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    rounds = parser.parse_args().rounds
    cli = [sys.executable, "-m", "trio_mcp"]
    cases = {
        "run support_desk, first reply": lambda: _first_reply(
            [*cli, "run", str(ROOT / "examples/support_desk.py")]
        ),
        "run notes_database:lifespan, first reply": lambda: _first_reply(
            [*cli, "run", f"{ROOT / 'examples/notes_database.py'}:lifespan"],
            env={"NOTES_DB": ":memory:"},
        ),
        "check support_desk": lambda: _finished(
            [*cli, "check", str(ROOT / "examples/support_desk.py")]
        ),
        "python -c pass (the floor)": lambda: _finished([sys.executable, "-c", "pass"]),
    }
    for name, case in cases.items():
        times = [case() * 1000 for _ in range(rounds)]
        print(
            f"{name:42} best {min(times):7.1f} ms   median {statistics.median(times):7.1f} ms"
        )


if __name__ == "__main__":
    main()

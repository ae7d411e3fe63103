"""Two ways the command line used to end in a traceback (issue 34, seen by a
newcomer), as real processes:

* ``trio-mcp call ... | head``: the reader stops reading; the command stops quietly
  with the status a shell reports for SIGPIPE, as Unix tools do;
* ``trio-mcp dev`` after an install directory was left behind: the Inspector is
  installed anyway (a real ``npm ci`` of the pinned lockfile), and the command says
  what it removed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from cli_helpers import cli

from trio_mcp._cli._dev import pin

BIG_SERVER = '''
from trio_mcp import Server, tool


@tool
def numbers(count: int) -> list[int]:
    """Count from zero.

    Args:
        count: How many numbers.
    """
    return list(range(count))


server = Server("numbers", "1.0", tools=[numbers])
'''


def test_call_stops_quietly_when_its_reader_stops_reading(tmp_path: Path) -> None:
    """The reply (about 1 MB of JSON) outgrows the pipe, so the write after the
    reader left always fails."""
    (tmp_path / "count_server.py").write_text(BIG_SERVER)
    command = [sys.executable, "-m", "trio_mcp", "call", "count_server.py:server"]
    process = subprocess.Popen(
        [*command, "numbers", "--args", '{"count": 100000}'],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None
    assert process.stderr is not None

    first = process.stdout.read(64)  # what `head -c 64` reads before it exits
    process.stdout.close()
    try:
        status = process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    stderr = process.stderr.read().decode()
    process.stderr.close()

    assert first.startswith(b"{")
    assert 141 == status, stderr
    assert "" == stderr


def test_dev_installs_over_what_an_earlier_install_left_and_says_so(
    tmp_path: Path,
) -> None:
    the_pin = pin()
    base = tmp_path / "inspectors"
    partial = base / f"inspector-{the_pin.version}-{the_pin.digest}"
    (partial / "node_modules").mkdir(parents=True)
    (partial / "node_modules" / "half-copied").write_text("")
    killed_long_ago = base / ".inspector-killed"
    killed_long_ago.mkdir()
    two_days_ago = time.time() - 2 * 24 * 3600
    os.utime(killed_long_ago, (two_days_ago, two_days_ago))
    in_progress = base / ".inspector-running"  # another install's, right now
    in_progress.mkdir()

    done = cli("dev", "--install-only", cwd=tmp_path,
               env={"TRIO_MCP_INSPECTOR_DIR": str(base)})  # fmt: skip

    assert 0 == done.returncode, done.stderr
    assert "Traceback" not in done.stderr
    assert (
        f"trio-mcp dev: {partial} held an incomplete MCP Inspector install (no "
        "launcher); removed it"
    ) in done.stderr.splitlines()
    assert (
        f"trio-mcp dev: {killed_long_ago} held the temporary directory of an install "
        "that was killed; removed it"
    ) in done.stderr.splitlines()
    launcher = partial.joinpath(
        "node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher",
        "build", "index.js",
    )  # fmt: skip
    assert launcher.is_file()
    assert not (partial / "node_modules" / "half-copied").exists()
    assert not killed_long_ago.exists()
    assert in_progress.is_dir()
    assert [] == sorted(p.name for p in base.iterdir() if p.name.startswith(".stale"))

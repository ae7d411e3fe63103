"""``examples/bench_server.py`` over stdio with the blocked-loop watch off.

    python bench/peers/trio_mcp_stdio.py [--legacy]

For ``bench/instructions.py``. The watch (``Limits.blocked_warning``) is a thread that
asks the loop for a beat ten times a second: a cost per second, not per call. Under
valgrind a call runs some 50 times slower and the machine's load decides how many
seconds a run lasts, so counted with the watch on, one ``echo`` call read 445k and
461k instructions in two rounds of one run. Everything else is the benchmark server
as ``bench/run.py`` starts it; ``--legacy`` makes it dual-era (``legacy=True``).
"""

from __future__ import annotations

import math
import sys
from functools import partial
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))

from bench_server import server

from trio_mcp import Limits

if __name__ == "__main__":
    server.legacy = "--legacy" in sys.argv[1:]  # the dual-era rows
    trio.run(partial(server.serve_stdio, limits=Limits(blocked_warning=math.inf)))

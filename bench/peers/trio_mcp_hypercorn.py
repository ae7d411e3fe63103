"""trio_mcp's ASGI app (``examples/bench_server.py``'s server) on a Hypercorn ``Config``.

    python bench/peers/trio_mcp_hypercorn.py PORT [--set FIELD=VALUE ...]

The app is ``server.mount()``, the one ``serve_http`` runs; the ``Config`` starts as
``serve_http`` sets it and takes the same ``--set`` overrides as ``ceiling.py http``,
so ``bench/hypercorn_study.py`` can measure a setting under both.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

import trio
from ceiling import hypercorn_config

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))

from bench_server import server


def main(argv: list[str]) -> None:
    """Serve on 127.0.0.1:PORT until interrupted."""
    from hypercorn.trio import serve

    overrides = [argv[i + 1] for i, arg in enumerate(argv) if arg == "--set"]
    trio.run(serve, server.mount(), hypercorn_config(int(argv[1]), overrides))


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):  # the bench stops HTTP with SIGINT
        main(sys.argv)

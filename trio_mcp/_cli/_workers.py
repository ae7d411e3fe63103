"""The two ends of multi-process serving that need the command line's loader.

``worker_app()`` runs in each Hypercorn worker: it loads the target named by
``TRIO_MCP_WORKER_SPEC`` and returns the ASGI app. ``python -m
trio_mcp._cli._workers WORKERS BIND`` is the supervisor process that
``serve_http(workers=N)`` starts.
"""

from __future__ import annotations

import sys

from .._dispatch._redis import RedisBroadcast
from .._transports._asgi import McpAsgiApp
from .._transports._workers import WorkerSpec, run_workers
from ._load import load_server

__all__ = ["main", "worker_app"]


def worker_app() -> McpAsgiApp:
    """Build this worker's app from the spec in the environment.

    Raises:
        McpError.Transport: if the spec is missing.
        LoadError: if the target cannot be loaded.
    """
    spec = WorkerSpec.from_environ()
    server = load_server(spec.target)
    url = spec.broadcast_url
    current = server.broadcast
    if url is not None and not (
        isinstance(current, RedisBroadcast) and current.url == url
    ):
        server.broadcast = RedisBroadcast(url)
    return McpAsgiApp(server.dispatcher, **spec.options)


def main(argv: list[str] | None = None) -> int:
    """Run Hypercorn's supervisor: ``WORKERS BIND``, the spec in the environment."""
    workers, bind = (sys.argv[1:] if argv is None else argv)[:2]
    return run_workers(WorkerSpec.from_environ(), workers=int(workers), bind=bind)


if __name__ == "__main__":
    sys.exit(main())

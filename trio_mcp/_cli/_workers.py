"""The two ends of multi-process serving that need the command line's loader.

``worker_app()`` runs in each Hypercorn worker: it sets up logging as ``trio-mcp
serve`` does in one process (a worker is a fresh process: nothing of the parent's
logging reaches it), loads the target named by ``TRIO_MCP_WORKER_SPEC`` and returns
the ASGI app. ``python -m
trio_mcp._cli._workers WORKERS BIND`` is the supervisor process that
``serve_http(workers=N)`` starts.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

from .._changes._redis import RedisBroadcast
from .._http._app import McpAsgiApp
from .._http._workers import WorkerSpec, run_workers
from .._legacy._asgi import LegacyApp
from ._load import load_server
from ._logs import configure_logging

__all__ = ["main", "worker_app"]


def worker_app() -> McpAsgiApp | LegacyApp:
    """Build this worker's app from the spec in the environment.

    Raises:
        McpError.Transport: if the spec is missing.
        LoadError: if the target cannot be loaded.
    """
    spec = WorkerSpec.from_environ()
    if spec.log_level is not None:
        configure_logging(spec.log_level)
    _finish_on_sigterm()
    server = load_server(spec.target)
    url = spec.broadcast_url
    current = server.broadcast
    if url is not None and not (
        isinstance(current, RedisBroadcast) and current.url == url
    ):
        server.broadcast = RedisBroadcast(url)
    if spec.legacy:
        server.legacy = True
    return server._wrapped(McpAsgiApp(server._dispatcher, **spec.options))


def _finish_on_sigterm() -> None:
    """Let a stopping worker finish its graceful stop when SIGTERM comes.

    Hypercorn's supervisor stops workers with a shared event, and once the first has
    exited it sends SIGTERM to the others, which are stopping too. By default that
    kills a worker at once, in the middle of handing its tasks over to the other
    replicas (issue 43); here it gives the worker ``_FINISH`` seconds more, then
    ends it.
    """
    if threading.current_thread() is not threading.main_thread():
        return

    def finish_soon(signum: int, frame: object) -> None:
        timer = threading.Timer(_FINISH, os._exit, (0,))
        timer.daemon = True
        timer.start()

    signal.signal(signal.SIGTERM, finish_soon)


#: Seconds a worker told SIGTERM while stopping may take to finish.
_FINISH = 10.0


def main(argv: list[str] | None = None) -> int:
    """Run Hypercorn's supervisor: ``WORKERS BIND``, the spec in the environment.

    The process that started it (``serve_http``) may die without cancelling it
    (SIGKILL): a watcher thread then stops the workers, so none outlives its owner
    holding the port.
    """
    workers, bind = (sys.argv[1:] if argv is None else argv)[:2]
    threading.Thread(
        target=_stop_when_orphaned, args=(os.getppid(),), daemon=True
    ).start()
    return run_workers(WorkerSpec.from_environ(), workers=int(workers), bind=bind)


def _stop_when_orphaned(parent: int) -> None:
    """Send ourselves SIGTERM (Hypercorn's graceful stop) once ``parent`` is gone."""
    while os.getppid() == parent:
        time.sleep(_ORPHAN_POLL)
    os.kill(os.getpid(), signal.SIGTERM)


#: Seconds between checks that the starting process is still alive.
_ORPHAN_POLL = 0.5


if __name__ == "__main__":
    sys.exit(main())

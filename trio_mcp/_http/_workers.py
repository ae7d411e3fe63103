"""Several Hypercorn Trio worker processes on one port, by Hypercorn's own supervisor.

``hypercorn.run.run`` starts ``workers`` processes (multiprocessing's spawn), each
of which imports the app from ``config.application_path`` and serves the same
listening socket; the kernel hands each new connection to one of them. A fresh
process cannot be handed a live ``Server``, so every worker builds its own from the
target (``module:attr`` or ``path/file.py:attr``) and the serving options, carried
in the environment variable ``TRIO_MCP_WORKER_SPEC``.

Invariants:
- Nothing is shared between workers but the socket, the state key (configured, so
  every worker verifies every other's ``requestState``) and, with a
  ``RedisBroadcast``, the changes; ``require_shared_key`` runs before any process
  starts.
- ``serve_workers`` (for ``serve_http(workers=N)``, inside a Trio run) binds the
  socket itself, so the port is known, and runs Hypercorn's supervisor as a child
  process holding that socket (``fd://``): Hypercorn installs signal handlers,
  which only a main thread may do. Cancelling it sends SIGTERM, Hypercorn's
  graceful stop.
"""

from __future__ import annotations

import base64
import logging
import os
import pickle
import sys
from functools import partial
from typing import Any, Final, cast

import attrs
import trio

from .._changes import Broadcast
from .._changes._redis import RedisBroadcast
from .._errors import InvalidArgument, Transport, install_hint
from .._protocol._state import KeyConfig, require_shared_key
from .._store import MemoryStore, Store
from ._options import HttpOptions, http_limits

log = logging.getLogger("trio_mcp.http")

__all__ = [
    "ENV_WORKER_SPEC",
    "WORKER_APP",
    "WorkerSpec",
    "find_target",
    "require_shared_sessions",
    "run_workers",
    "serve_workers",
    "spec_for",
]

ENV_WORKER_SPEC: Final = "TRIO_MCP_WORKER_SPEC"
#: What each worker evaluates to get its app (Hypercorn's ``module:expression``).
WORKER_APP: Final = "trio_mcp._cli._workers:worker_app()"
#: The module run as Hypercorn's supervisor process by ``serve_workers``.
SUPERVISOR: Final = "trio_mcp._cli._workers"


@attrs.frozen
class WorkerSpec:
    """How each worker builds its app: the server's target and the app's options."""

    target: str
    """``module:attr`` or ``path/file.py:attr``, as ``trio-mcp serve`` takes it."""
    options: dict[str, Any]
    """Keyword arguments of ``McpAsgiApp`` besides the dispatcher."""
    broadcast_url: str | None = None
    """A Redis URL: every worker's server gets a ``RedisBroadcast`` on it."""
    log_level: str | None = None
    """``trio-mcp serve --log-level``: each worker logs to stderr at this level, as
    one process does (receipts at ``info``); None leaves a worker's logging alone."""
    legacy: bool = False
    """``trio-mcp serve --legacy``: every worker's server also serves handshake-era
    clients (their sessions in the server's shared store)."""

    def encode(self) -> str:
        """Return the spec as text for the environment.

        Pickle, not JSON, so module-level functions (a ``principal`` resolver, an
        ``allow`` function) reach the workers; the text only ever travels from a
        process to its own children.

        Raises:
            McpError.Transport: if an option cannot be pickled (a lambda, a closure).
        """
        try:
            return base64.b64encode(pickle.dumps(self)).decode("ascii")
        except (pickle.PicklingError, TypeError, AttributeError) as exc:
            raise Transport(
                "serving from several workers needs options that each worker can "
                "import: pass module-level functions for 'principal' and 'allow', "
                f"not lambdas or closures ({exc})"
            ) from exc

    @classmethod
    def from_environ(cls) -> WorkerSpec:
        """Read the spec that ``run_workers`` left in the environment.

        Raises:
            McpError.Transport: if it is missing or not a spec.
        """
        text = os.environ.get(ENV_WORKER_SPEC)
        if not text:
            raise Transport(
                f"{ENV_WORKER_SPEC} is not set: worker processes are started by "
                "'trio-mcp serve --workers N' or serve_http(workers=N)"
            )
        spec = pickle.loads(base64.b64decode(text))
        if not isinstance(spec, cls):
            raise Transport(f"{ENV_WORKER_SPEC} does not hold a worker spec")
        return spec


def find_target(server: object) -> str:
    """Return a target naming ``server``: the module attribute that holds it.

    Raises:
        McpError.Transport: if no module holds it at module level.
    """
    for name, module in list(sys.modules.items()):
        for attr, value in list(vars(module).items()):
            if value is not server:
                continue
            if name == "__main__":
                path = getattr(module, "__file__", None)
                if path is None:
                    continue
                return f"{os.path.abspath(path)}:{attr}"
            return f"{name}:{attr}"
    raise Transport(
        "serve_http(workers=N) starts fresh processes that import the server, but "
        "this Server is not a module-level name; assign it to one (server = "
        "Server(...)) or run: trio-mcp serve package.module:server --workers N"
    )


def require_shared_sessions(store: Store, *, legacy: bool, workers: int) -> None:
    """Handshake-era sessions across ``workers`` processes need a shared store.

    A client's requests land on any worker (each connection goes to whichever
    accepts it), so a session kept in one worker's memory would be unknown (404) to
    the others.

    Raises:
        McpError.InvalidArgument: if ``legacy`` and ``workers > 1`` and ``store`` is
            not shared.
    """
    if legacy and workers > 1 and not store.shared:
        raise InvalidArgument(
            f"{workers} workers serving handshake-era clients (legacy) need a "
            "shared session store: give the server store=RedisStore(url); with each "
            "worker's own memory a session opened on one worker is unknown (404) to "
            "the others"
        )


def spec_for(
    server: object,
    options: dict[str, Any],
    *,
    state_key: KeyConfig,
    broadcast: Broadcast,
    workers: int,
    store: Store | None = None,
    legacy: bool = False,
) -> WorkerSpec:
    """Return the spec that rebuilds ``server`` in each of ``workers`` processes.

    Raises:
        StateKeyRequired: if no state key is configured.
        McpError.Transport: if ``server`` is not a module-level name.
        McpError.InvalidArgument: for ``legacy`` without a shared ``store``.
    """
    require_shared_key(state_key, processes=workers)
    require_shared_sessions(store or MemoryStore(), legacy=legacy, workers=workers)
    url = broadcast.url if isinstance(broadcast, RedisBroadcast) else None
    if url is None:
        log.warning(
            "%d workers without a RedisBroadcast: resource updates and catalog "
            "changes reach only the listen streams of the worker that made them",
            workers,
        )
    return WorkerSpec(
        find_target(server), dict(options), broadcast_url=url, legacy=legacy
    )


def run_workers(spec: WorkerSpec, *, workers: int, bind: str) -> int:
    """Run Hypercorn's supervisor with ``workers`` Trio workers; return its exit code.

    Blocks until SIGINT or SIGTERM (must run in a main thread, outside Trio).

    Raises:
        McpError.Transport: if Hypercorn is missing.
    """
    try:
        from hypercorn.config import Config  # optional extra, loaded on use
        from hypercorn.run import run
    except ImportError as exc:
        raise Transport(
            f"serving HTTP needs Hypercorn; {install_hint('http')}"
        ) from exc
    from ._hypercorn import hypercorn_config

    os.environ[ENV_WORKER_SPEC] = spec.encode()
    config = hypercorn_config(Config)
    # The app's keywords, as mount() took them.
    options = cast(HttpOptions, spec.options)
    config.keep_alive_timeout = http_limits(options).idle_timeout
    config.bind = [bind]
    config.workers = workers
    config.worker_class = "trio"
    config.application_path = WORKER_APP
    return run(config)


async def serve_workers(
    spec: WorkerSpec,
    *,
    host: str,
    port: int,
    workers: int,
    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``spec`` from ``workers`` processes on ``host:port`` until cancelled.

    Raises:
        McpError.Transport: if the address cannot be bound or the workers fail.
    """
    from ._hypercorn import bind_socket

    sock = bind_socket(host, port)
    with sock:
        fd = sock.fileno()
        # The workers import the target as this process can: with its sys.path.
        path = os.pathsep.join(p for p in sys.path if p)
        env = {**os.environ, ENV_WORKER_SPEC: spec.encode(), "PYTHONPATH": path}
        command = [sys.executable, "-m", SUPERVISOR, str(workers), f"fd://{fd}"]
        async with trio.open_nursery() as nursery:
            process: trio.Process = await nursery.start(
                partial(trio.run_process, command, env=env, pass_fds=(fd,), check=False)
            )
            # Connections wait in the bound socket's backlog until a worker accepts.
            task_status.started(sock.getsockname()[1])
            await process.wait()
        if process.returncode not in (0, -15):
            raise Transport(
                f"the Hypercorn workers exited with status {process.returncode}; "
                "their errors are above on stderr"
            )

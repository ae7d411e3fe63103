"""``serve_http``: the ASGI app on Hypercorn's Trio worker, in the caller's Trio run.

Hypercorn is an optional dependency (the ``[http]`` extra) and is imported only when
this function runs, so ``import trio_mcp`` never loads the web stack.

Invariants:
- Binding beyond loopback without ``require_auth=True`` is refused before any socket
  is opened (``McpError.InsecureBinding``).
- We bind the listening socket ourselves and hand it to Hypercorn, so the bound
  port (port 0 picks a free one) is known and reported through ``task_status``,
  and a failed bind leaks no socket.
- Hypercorn and socket failures leave as ``McpError.Transport`` with the cause kept.
"""

from __future__ import annotations

import errno
import logging
import socket
from functools import partial
from typing import TYPE_CHECKING, Protocol

import trio

if TYPE_CHECKING:
    from hypercorn.config import Config

from .._errors import Transport, install_hint
from .._interrupt import interrupts_unwrapped
from .._limits import Limits
from .._loopback import check_binding
from ._response import Receive, Scope, Send

__all__ = [
    "bind_socket",
    "check_binding",
    "hypercorn_config",
    "serve_hypercorn",
]

log = logging.getLogger("trio_mcp.http")

_BACKLOG = 100


def bind_socket(host: str, port: int) -> socket.socket:
    """Bind and listen ourselves, so a failure closes the socket and port 0 is known."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host.strip("[]"), port, type=socket.SOCK_STREAM
        )[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise Transport(_cannot_bind(host, port, exc)) from exc
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind(address)
        sock.listen(_BACKLOG)
        sock.setblocking(False)
    except OSError as exc:
        sock.close()
        raise Transport(_cannot_bind(host, port, exc)) from exc
    return sock


def _cannot_bind(host: str, port: int, exc: OSError) -> str:
    """Why a socket could not be bound (the OS's reason) and what to do about it."""
    reason = (exc.strerror or str(exc) or type(exc).__name__).lower()
    text = f"cannot serve HTTP on {host}:{port}: {reason}"
    if exc.errno == errno.EADDRINUSE:
        return (
            f"{text}; another process is listening there: stop it, or choose another "
            "port (serve_http(port=...), or --port on the command line)"
        )
    if exc.errno == errno.EACCES:
        return f"{text}; ports below 1024 need privileges: choose a port >= 1024"
    if isinstance(exc, socket.gaierror) or exc.errno == errno.EADDRNOTAVAIL:
        return f"{text}; check the host name or address (127.0.0.1 is this machine)"
    return text


def hypercorn_config(config_class: type[Config]) -> Config:
    """Our Hypercorn settings, one place for in-process and multi-process serving."""
    config = config_class()
    config.accesslog = None
    config.errorlog = log
    config.graceful_timeout = 1.0
    return config


class Served(Protocol):
    """What Hypercorn serves: an ASGI app (``McpAsgiApp``, or a dual-era server's
    app in front of it), its limits and the event ``close()`` sets."""

    limits: Limits
    closing: trio.Event

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None: ...


async def serve_hypercorn(
    app: Served,
    *,
    host: str,
    port: int,
    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Run ``app`` on ``host:port`` until cancelled or ``app.close()``; report the port.

    Raises:
        McpError.Transport: if Hypercorn is missing or the address cannot be bound.
    """
    try:
        from hypercorn.config import Config, Sockets  # optional extra, loaded on use
        from hypercorn.trio.run import worker_serve
        from hypercorn.utils import wrap_app
    except ImportError as exc:
        raise Transport(
            f"serving HTTP needs Hypercorn; {install_hint('http')}"
        ) from exc
    config = hypercorn_config(Config)
    config.keep_alive_timeout = app.limits.idle_timeout
    sock = bind_socket(host, port)
    bound_port: int = sock.getsockname()[1]
    # hypercorn.trio.serve binds from config strings and leaks the socket when the
    # bind fails; its worker_serve takes ready sockets, which we own and close.
    closed: list[bool] = []
    with sock, interrupts_unwrapped():
        await worker_serve(
            wrap_app(app, config.wsgi_max_body_size, "asgi"),  # type: ignore[arg-type]
            config,
            sockets=Sockets(
                secure_sockets=[], insecure_sockets=[sock], quic_sockets=[]
            ),
            # app.close() is the graceful stop: listen streams get their results,
            # Hypercorn stops accepting and finishes within graceful_timeout.
            shutdown_trigger=partial(_closed, app, closed),
            task_status=_PortStatus(task_status, bound_port),
        )
    if not closed:
        # Hypercorn takes a KeyboardInterrupt raised in its own task for a graceful
        # stop and returns; nothing else ends it without app.close() (no
        # max_requests is configured). Pass the interrupt on, as from any task.
        raise KeyboardInterrupt


async def _closed(app: Served, closed: list[bool]) -> None:
    """Hypercorn's shutdown trigger: ``app.close()``, noted in ``closed``."""
    await app.closing.wait()
    closed.append(True)


class _PortStatus:
    """Adapts Hypercorn's ``started(binds)`` to ours, ``started(port)``."""

    def __init__(self, outer: trio.TaskStatus[int], port: int) -> None:
        self.outer = outer
        self.port = port

    def started(self, value: object = None) -> None:
        self.outer.started(self.port)

"""``serve_http``: the ASGI app on Hypercorn's Trio worker, in the caller's Trio run.

Hypercorn is an optional dependency (the ``[http]`` extra) and is imported only when
this function runs, so ``import trio_mcp`` never loads the web stack.

Invariants:
- Binding beyond loopback without ``require_auth=True`` is refused before any socket
  is opened (``McpError.InsecureBinding``).
- The bound port is reported through ``task_status`` (binding port 0 picks a free
  one), read from what Hypercorn itself says it bound.
- Hypercorn and socket failures leave as ``McpError.Transport`` with the cause kept.
"""

from __future__ import annotations

import ipaddress
import logging
from functools import partial

import trio

from .._errors import InsecureBinding, Transport
from ._asgi import McpAsgiApp

__all__ = ["check_binding", "is_loopback", "serve_hypercorn"]

log = logging.getLogger("trio_mcp.http")


def is_loopback(host: str) -> bool:
    """Return whether ``host`` names only this machine (``localhost``, 127/8, ``::1``)."""
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def check_binding(host: str, *, require_auth: bool) -> None:
    """Refuse to listen beyond loopback unless every request must be authenticated.

    Raises:
        McpError.InsecureBinding: if ``host`` is not loopback and ``require_auth`` is false.
    """
    if not require_auth and not is_loopback(host):
        raise InsecureBinding(
            f"refusing to serve HTTP on {host!r} without authentication: bind to "
            "127.0.0.1, or pass require_auth=True behind an authenticating ASGI layer"
        )


def _port_of(bind: str) -> int:
    """Return the port of a Hypercorn bind description such as ``http://[::1]:8000``."""
    return int(bind.rsplit(":", 1)[1])


async def serve_hypercorn(
    app: McpAsgiApp,
    *,
    host: str,
    port: int,
    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Run ``app`` on ``host:port`` until cancelled; report the bound port.

    Raises:
        McpError.Transport: if Hypercorn is missing or the address cannot be bound.
    """
    try:
        from hypercorn.config import Config  # optional extra, loaded on use
        from hypercorn.trio import serve
    except ImportError as exc:
        raise Transport(
            'serving HTTP needs Hypercorn; install it with: pip install "trio-mcp[http]"'
        ) from exc
    config = Config()
    address = f"[{host.strip('[]')}]" if ":" in host else host
    config.bind = [f"{address}:{port}"]
    config.accesslog = None
    config.errorlog = log
    config.graceful_timeout = 1.0
    try:
        async with trio.open_nursery() as nursery:
            binds: list[str] = await nursery.start(
                partial(serve, app, config, mode="asgi")  # type: ignore[arg-type]
            )
            task_status.started(_port_of(binds[0]))
    except* OSError as group:
        raise Transport(f"cannot serve HTTP on {address}:{port}") from group.exceptions[
            0
        ]

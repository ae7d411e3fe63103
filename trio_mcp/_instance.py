"""Which process served a request: the replica's name and the worker's process id.

Behind a load balancer any request may land on any worker of any replica, so
receipts and spans name the one that served it. The replica is
``TRIO_MCP_INSTANCE`` when set (for example the container or pod name), else the
host name; the worker is the process id, so two workers of one replica differ.
"""

from __future__ import annotations

import os
import socket
from typing import Final

__all__ = ["ENV_INSTANCE", "instance_id"]

ENV_INSTANCE: Final = "TRIO_MCP_INSTANCE"

_cached: tuple[int, str, str] | None = None


def instance_id() -> str:
    """Return ``"<replica>:<pid>"`` for this process.

    Cached per process id and replica name, so a forked worker names itself anew.
    """
    global _cached
    pid = os.getpid()
    replica = os.environ.get(ENV_INSTANCE, "").strip() or socket.gethostname()
    if _cached is None or _cached[:2] != (pid, replica):
        _cached = (pid, replica, f"{replica}:{pid}")
    return _cached[2]

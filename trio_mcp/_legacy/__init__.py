"""Handshake-era clients beside the stateless core (opt-in dual era, ``legacy=True``).

Clients of MCP revisions 2025-11-25, 2025-06-18 and 2025-03-26 (``initialize`` and
a session) are served beside 2026-07-28 ones; the core stays stateless and era-blind.
``_session`` (the ``Session`` value), ``_shapes`` (results in a revision's shapes),
``_rounds`` (carried calls and their rounds) and ``_machine`` (routing, the internal
listen, stdio's ``StreamMachine``) do no I/O; ``_asgi`` (the HTTP app in front of the
modern one), ``_get`` (a session's ``GET`` stream), ``_sessions`` (memory or Redis)
and ``_hub`` (what this process holds, routed to from other replicas) do.
"""

from collections.abc import Callable

from .._limits import Limits
from ._machine import StreamMachine
from ._session import ALL_REVISIONS, REVISIONS, Session, negotiate
from ._shapes import OutputSchemaOf

__all__ = ["ALL_REVISIONS", "REVISIONS", "Session", "negotiate", "stream_front"]


def stream_front(output_schema: OutputSchemaOf) -> Callable[[Limits], StreamMachine]:
    """What a stream transport puts in front of its loop for a dual-era server: a
    ``StreamMachine`` per stream (the loop performs its effects)."""

    def front(limits: Limits) -> StreamMachine:
        return StreamMachine(limits, output_schema)

    return front

"""Handshake-era clients beside the stateless core: the legacy edge (opt-in dual era).

``Server(..., legacy=True)`` serves clients of MCP revisions 2025-11-25, 2025-06-18 and
2025-03-26 (``initialize`` and a session) as well as 2026-07-28 ones. The core
(catalog, runner, handlers) stays stateless and era-blind: this package translates at
the transport, message by message.

- ``_session``: the ``Session`` value (revision, the client's capabilities and info,
  log level, subscriptions), ``negotiate`` and the modern params of a request;
- ``_shapes``: modern results in a legacy revision's shapes (pure);
- ``_rounds``: a call carried through the core, its rounds asked of the client as
  server-to-client requests, and their bounds (pure);
- ``_machine``: the session machine, sans I/O: routing, the internal listen, and
  stdio's whole session (``StreamMachine``, the ``Front`` of a stream's loop);
- ``_asgi``: Streamable HTTP sessions, an ASGI app in front of the modern one, with
  ``_get`` (the session's ``GET`` stream), ``_sessions`` (where sessions are kept:
  memory or Redis) and ``_hub`` (what this process holds of them, and the routing
  to it from other replicas).
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

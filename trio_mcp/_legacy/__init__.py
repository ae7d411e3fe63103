"""Handshake-era clients beside the stateless core: the legacy edge (opt-in dual era).

``Server(..., legacy=True)`` serves clients of MCP revisions 2025-11-25, 2025-06-18 and
2025-03-26 (``initialize`` and a session) as well as 2026-07-28 ones. The core
(catalog, runner, handlers) stays stateless and era-blind: this package translates at
the transport, message by message.

- ``_session``: the ``Session`` value (revision, the client's capabilities and info,
  log level, subscriptions) and ``negotiate``;
- ``_shapes``: modern results in a legacy revision's shapes (pure);
- ``_translate``: one legacy request as the modern one and its reply back (pure: what
  every transport's edge does per request);
- ``_rounds``: a modern ``input_required`` round as server-to-client requests (pure,
  plus ``drive_round`` parameterised by how a request is asked);
- ``_listens``: updates and list changes from one internal ``subscriptions/listen``;
- ``_edge``: all of it in front of a stream transport's message loop (stdio), which
  reads it through ``_input`` in its own task;
- ``_http``: Streamable HTTP sessions in front of the mounted app (``initialize``,
  ``Mcp-Session-Id``, requests, answers, cancellation, ``DELETE``), with ``_get``
  (the session's ``GET`` stream), ``_sessions`` (where sessions are kept: memory or
  Redis) and ``_hub`` (what this process holds of them, and the routing to it from
  other replicas).
"""

from ._edge import legacy_edge
from ._session import ALL_REVISIONS, REVISIONS, Session, negotiate
from ._translate import legacy_reply, modern_params, round_of

__all__ = [
    "ALL_REVISIONS",
    "REVISIONS",
    "Session",
    "legacy_edge",
    "legacy_reply",
    "modern_params",
    "negotiate",
    "round_of",
]

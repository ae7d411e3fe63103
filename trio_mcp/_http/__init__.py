"""Streamable HTTP (MCP revision 2026-07-28): the ASGI app, and serving it.

``_app`` is the framework-free ASGI 3 application ``Server.mount`` returns; the
other modules are its parts, each one concern: ``_access`` (binding, Host, Origin,
CORS), ``_oauth`` (bearer tokens and RFC 9728 metadata: the HTTP side of OAuth;
``trio_mcp.auth`` is the resource server itself), ``_media`` (content types),
``_body`` (reading one message), ``_gate`` (room for a call, rate limits),
``_forwarded`` (the client's address behind proxies), ``_disconnect`` (a client
that goes away), ``_response`` (JSON or SSE), ``_health`` (``/healthz`` and
``/metrics``); ``_hypercorn`` and ``_workers`` serve the app on Hypercorn's Trio
worker. ``_options`` holds ``HttpOptions``, the keyword arguments ``mount`` and
``serve_http`` share.

Importing this package imports no web stack: Hypercorn is loaded by
``_hypercorn`` alone, when ``serve_http`` runs.
"""

"""A FastAPI app with a route of its own and a trio_mcp server at /mcp.

``test_asyncio_hosts.py`` serves it with the uvicorn command line in a child process:
``python -m uvicorn fastapi_served:app --app-dir tests/asyncio`` (``tests/`` on its
``PYTHONPATH``, for ``support``).
"""

from __future__ import annotations

from asgi_hosts import add, fastapi_host

from trio_mcp import Server

app, _ = fastapi_host(Server("served", "1.0", tools=[add]))

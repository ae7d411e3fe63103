"""A host application's own authentication, as Starlette and FastAPI apps write it."""

from __future__ import annotations

from starlette.authentication import AuthCredentials, AuthenticationBackend, SimpleUser
from starlette.requests import HTTPConnection

__all__ = ["HeaderUser"]


class HeaderUser(AuthenticationBackend):
    """The ``x-user`` header names the user (``scope["user"]``, scope ``mcp``)."""

    async def authenticate(
        self, conn: HTTPConnection
    ) -> tuple[AuthCredentials, SimpleUser] | None:
        name = conn.headers.get("x-user")
        return (AuthCredentials(["mcp"]), SimpleUser(name)) if name else None

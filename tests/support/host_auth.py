"""Who is calling, as a host application or a ``principal=`` callable finds it:
the ``x-user`` header names the user."""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

from starlette.authentication import AuthCredentials, AuthenticationBackend, SimpleUser
from starlette.requests import HTTPConnection

__all__ = ["HeaderUser", "user_from_header"]


class HeaderUser(AuthenticationBackend):
    """The ``x-user`` header names the user (``scope["user"]``, scope ``mcp``)."""

    async def authenticate(
        self, conn: HTTPConnection
    ) -> tuple[AuthCredentials, SimpleUser] | None:
        name = conn.headers.get("x-user")
        return (AuthCredentials(["mcp"]), SimpleUser(name)) if name else None


def user_from_header(scope: MutableMapping[str, Any]) -> str | None:
    """A ``principal=`` callable: the ``x-user`` header of the ASGI scope, if any."""
    for name, value in scope["headers"]:
        if name == b"x-user":
            return str(value.decode())
    return None

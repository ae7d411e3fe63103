"""What the HTTP transport asks of a bearer-token checker, and what it gets back.

``trio_mcp.auth.BearerAuth`` (extra ``auth``) checks OAuth tokens; the transport only
knows this interface, so ``import trio_mcp`` never loads the JOSE and HTTP client
libraries. A checker admits a request (``Admission``: the principal, the capabilities
its token's scopes grant) or refuses it with a ``Challenge``, the RFC 6750 answer
(401 ``invalid_token``, 403 ``insufficient_scope``). Plain values; no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Literal, Protocol

import attrs

if TYPE_CHECKING:
    from ._protected import ProtectedResource

__all__ = ["Admission", "BearerGate", "Challenge"]


@attrs.frozen
class Admission:
    """A request whose token passed every check."""

    principal: object
    """What handlers see as ``ToolContext.current().principal``."""
    granted: frozenset[str]
    """Names of the capabilities the token's scopes grant."""
    scopes: frozenset[str]
    """The token's scopes."""


@attrs.frozen
class Challenge:
    """An RFC 6750 refusal: 401 without a (good) token, 403 for too few scopes.

    ``description`` is safe to show: it never holds the token or a claim value.
    """

    status: Literal[401, 403]
    error: Literal["invalid_token", "insufficient_scope"] | None
    description: str
    scope: tuple[str, ...] = ()
    """For 403: the scopes the call needs (the token's and the missing ones)."""

    def header(self, metadata_url: str) -> bytes:
        """The ``WWW-Authenticate`` value (RFC 6750 §3, RFC 9728 §5.1)."""
        parts = []
        if self.error is not None:
            parts.append(f'error="{self.error}"')
            parts.append(f'error_description="{_quoted(self.description)}"')
        if self.scope:
            parts.append(f'scope="{_quoted(" ".join(self.scope))}"')
        parts.append(f'resource_metadata="{_quoted(metadata_url)}"')
        return ("Bearer " + ", ".join(parts)).encode("latin-1", "replace")


class BearerGate(Protocol):
    """A bearer-token checker a mounted app runs before each request."""

    @property
    def resource_metadata(self) -> ProtectedResource:
        """The RFC 9728 document of the resource it protects."""

    @property
    def hide_ungranted(self) -> bool:
        """Whether lists show a caller only what their token can use."""

    async def admit(self, authorization: str | None) -> Admission | Challenge:
        """Check the ``Authorization`` header's value (None when absent).

        Never raises for anything a client sent; never waits longer than its
        timeouts.
        """

    def step_up(self, admission: Admission, missing: Iterable[str]) -> Challenge | None:
        """The 403 for a call missing capabilities that scopes would grant.

        None when some missing capability is granted by no scope (the call is then
        refused the ordinary way).
        """


def _quoted(text: str) -> str:
    """An RFC 9110 quoted-string body: backslash and double quote escaped."""
    return text.replace("\\", "\\\\").replace('"', '\\"')

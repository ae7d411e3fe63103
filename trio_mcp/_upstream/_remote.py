"""A relayed call sent to a remote upstream: its credential, its headers, its
deadline, its progress.

``Remote`` is the ``Send`` of a remote upstream's entries. A call goes through the
client the supervisor holds (``_supervise``), in the inbound call's own task, so
Trio's cancellation of that task (an inbound cancel, a client gone, the deadline,
shutdown) cancels the upstream request, which the client cancels at the upstream.

What reaches the upstream of the inbound request: its arguments, and the headers
named in ``forward_headers``; nothing else (no ``Authorization``, no cookie). The
upstream's own credential is ``Upstream(auth=...)``: a token, or what the callable
returns for the inbound principal, asked once per call here (its failure is a
tool error naming the upstream, never the token) and handed to the client's
``auth=`` through a context variable the client reads in this task.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from typing import Protocol

import attrs
import trio

from .._dispatch._call import Call
from .._dispatch._relayed import Unanswered
from .._errors import Remote as RemoteError
from .._errors import Timeout, Transport
from .._json import JsonObject, JsonValue
from ._value import Upstream


class Requests(Protocol):
    """What a relayed call needs of ``trio_mcp.client.Client`` (which only the
    supervisor imports)."""

    async def request(
        self,
        method: str,
        params: Mapping[str, JsonValue] | None = None,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - the client's deadline
        progress: Callable[[float, float | None, str | None], object] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> JsonObject: ...


__all__ = ["Remote", "Requests", "forwarded", "own_token"]

#: Seconds the client's own deadline runs past the inbound call's: the inbound
#: scope is what ends a call, and the client's deadline only a backstop.
_BACKSTOP = 1.0


@attrs.frozen
class _Credential:
    """The token of the relayed call running in this task (None: none)."""

    token: str | None = attrs.field(repr=False)


_CALL: ContextVar[_Credential | None] = ContextVar(
    "trio_mcp_upstream_credential", default=None
)


async def own_token(upstream: Upstream, principal: object | None) -> str | None:
    """The upstream's credential for ``principal`` (None: the gateway's own
    requests), or None for none."""
    auth = upstream.auth
    if auth is None or isinstance(auth, str):
        return auth
    token = await auth(principal)
    if token is not None and not isinstance(token, str):
        raise TypeError(f"auth= returned a {type(token).__name__}, not a str or None")
    return token


class Remote:
    """Sends relayed calls to a remote upstream through its current client."""

    def __init__(self, upstream: Upstream) -> None:
        self.upstream = upstream
        self.client: Requests | None = None
        """The client of the live connection; None while there is none."""

    async def token(self) -> str | None:
        """The client's ``auth=``: the relayed call's token in its task, else the
        gateway's own (catalog requests: ``auth(None)``)."""
        credential = _CALL.get()
        if credential is not None:
            return credential.token
        return await own_token(self.upstream, None)

    async def __call__(self, method: str, params: JsonObject, call: Call) -> JsonObject:
        client = self.client
        if client is None:
            raise Unanswered("it is not connected now (the gateway retries it)")
        ctx = call.context
        credential = _Credential(await self._credential(call.principal))
        left = math.inf if ctx.deadline is None else ctx.deadline - trio.current_time()

        async def progress(
            done: float, total: float | None, message: str | None
        ) -> None:
            await ctx.progress(done, total, message)

        reset = _CALL.set(credential)
        try:
            return await client.request(
                method,
                params,
                timeout=min(left, self.upstream.timeout) + _BACKSTOP,
                progress=progress if ctx.progress_token is not None else None,
                headers=forwarded(call.caller.headers, self.upstream.forward_headers),
            )
        except RemoteError as exc:
            raise Unanswered(
                f"answered error {exc.code}: {exc.message}", exc.code
            ) from None
        except Timeout:
            raise Unanswered("it did not answer in time") from None
        except Transport as exc:
            raise Unanswered(str(exc)) from None
        finally:
            _CALL.reset(reset)

    async def _credential(self, principal: object | None) -> str | None:
        """The upstream's token for this caller; a failure is said without it."""
        try:
            return await own_token(self.upstream, principal)
        except Exception as exc:
            raise Unanswered(
                f"its credential could not be obtained ({type(exc).__name__})"
            ) from None


def forwarded(
    headers: Mapping[str, str] | None, names: tuple[str, ...]
) -> dict[str, str] | None:
    """The inbound headers named in ``forward_headers`` (None when none)."""
    if not names or headers is None:
        return None
    found = {name: headers[name] for name in names if name in headers}
    return found or None

"""``Limits``: every bound a transport enforces, as one frozen value.

Built once and threaded whole through ``serve_stdio``, ``serve_websocket``,
``mount``, ``serve_http``, ``serve_messages`` and ``McpTestClient``; the transports
read nothing else. The fields set most often can also be given to those methods as
keywords of their own (``LimitFields``: ``serve_websocket(max_concurrent=4)``), which
are spellings of the same value (``Limits.of``), not a second way in. On the serve
methods they are deprecated (a ``DeprecationWarning``), except the three that
``serve_stdio`` names (``max_message_bytes``, ``max_depth``, ``max_concurrent``). Each
default is documented in docs/limits.md.
"""

from __future__ import annotations

import warnings
from collections.abc import Collection
from typing import TypedDict

import attrs

from . import _checks as checks
from ._errors import InvalidArgument
from ._units import (
    DEFAULT_MAX_CONCURRENT,
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_MESSAGE_BYTES,
    Seconds,
    seconds,
)

__all__ = ["LimitFields", "Limits", "StdioFields"]


_at_least_one = checks.at_least(1)
_at_least_zero = checks.at_least(0)


def _duration(value: Seconds, name: str) -> float:
    result = seconds(value, what=f"Limits.{name}")
    if result is None:
        raise InvalidArgument(f"Limits.{name} must be seconds or a timedelta, not None")
    return result


# One converter per field, so an error names the field (mypy's attrs plugin
# does not follow ``attrs.Converter(..., takes_field=True)``).
def _grace_period(value: Seconds) -> float:
    return _duration(value, "grace_period")


def _keepalive_interval(value: Seconds) -> float:
    return _duration(value, "keepalive_interval")


def _idle_timeout(value: Seconds) -> float:
    return _duration(value, "idle_timeout")


def _body_timeout(value: Seconds) -> float:
    return _duration(value, "body_timeout")


def _blocked_warning(value: Seconds) -> float:
    return _duration(value, "blocked_warning")


def _session_idle(value: Seconds) -> float:
    return _duration(value, "session_idle")


def _positive(
    instance: object, attribute: attrs.Attribute[float], value: float
) -> None:
    if not value > 0:
        raise checks.invalid(f"Limits.{attribute.name}", "positive seconds", value)


@attrs.frozen(kw_only=True)
class Limits:
    """The bounds of one transport; the defaults suit a local server.

    Args:
        max_message_bytes: Largest message read; a larger one is answered with
            -32600 (HTTP 413) without being held in memory.
        max_depth: Deepest nesting of arrays and objects; deeper is -32700.
        max_concurrent: Most handlers (tool calls, prompt gets, resource reads,
            completions) running at once. Discovery and lists never wait for one,
            listen streams never take one.
        max_waiting: Most calls waiting for a handler slot; a call beyond that is
            answered at once with -32000 ("server busy"; over HTTP with 503 and
            ``Retry-After``).
        max_listens: Most open ``subscriptions/listen`` streams per connection
            (stdio, WebSocket), or per principal (per client address when
            anonymous) over HTTP; one more is answered at once with -32000 (over
            HTTP with 503 and ``Retry-After``).
        max_listens_total: Most open HTTP listen streams of one app (one per
            ``serve_http`` process or worker), whoever opened them, and at most
            half the process's descriptor limit (``RLIMIT_NOFILE``); one more is
            answered like one past ``max_listens``.
        grace_period: Seconds that requests still running when the input ends
            get to finish before they are cancelled.
        keepalive_interval: Seconds of quiet after which an HTTP listen stream
            gets a ``:`` comment, so proxies keep it open.
        idle_timeout: Seconds an HTTP keep-alive connection may wait for its next
            request before ``serve_http`` closes it (Hypercorn's
            ``keep_alive_timeout``), so idle clients cannot hold every socket.
        body_timeout: Seconds an HTTP request body may take to arrive; a slower
            one is answered with 408 and its connection closed.
        blocked_warning: Seconds a handler may hold the event loop in one step (a
            synchronous ``time.sleep`` or socket call in an ``async def``) before
            the ``trio_mcp`` logger warns, once per handler; ``math.inf`` turns
            the warning off.
        max_sessions: Most handshake-era Streamable HTTP sessions kept at once
            (``Server(legacy=True)``), per store. When they are all open, a new
            ``initialize`` ends the least recently used session of its own caller
            (whose next request gets 404, and whose client initializes again);
            a caller that holds none is answered 503 and ``Retry-After``: no caller
            ends another's session.
        max_sessions_per_caller: Most handshake-era HTTP sessions of one principal
            (of one client address when anonymous, as the rate limit counts
            them); one more ends that caller's least recently used session.
        session_idle: Seconds a handshake-era HTTP session may go unused (no
            request, no open ``GET`` stream) before it expires (then 404).
    """

    max_message_bytes: int = attrs.field(
        default=DEFAULT_MAX_MESSAGE_BYTES, validator=_at_least_one
    )
    max_depth: int = attrs.field(default=DEFAULT_MAX_DEPTH, validator=_at_least_one)
    max_concurrent: int = attrs.field(
        default=DEFAULT_MAX_CONCURRENT, validator=_at_least_one
    )
    max_waiting: int = attrs.field(default=64, validator=_at_least_zero)
    max_listens: int = attrs.field(default=256, validator=_at_least_one)
    max_listens_total: int = attrs.field(default=1024, validator=_at_least_one)
    grace_period: float = attrs.field(default=5.0, converter=_grace_period)
    keepalive_interval: float = attrs.field(
        default=15.0, converter=_keepalive_interval, validator=_positive
    )
    idle_timeout: float = attrs.field(
        default=5.0, converter=_idle_timeout, validator=_positive
    )
    body_timeout: float = attrs.field(
        default=30.0, converter=_body_timeout, validator=_positive
    )
    blocked_warning: float = attrs.field(
        default=1.0, converter=_blocked_warning, validator=_positive
    )
    max_sessions: int = attrs.field(default=10_000, validator=_at_least_one)
    max_sessions_per_caller: int = attrs.field(default=16, validator=_at_least_one)
    session_idle: float = attrs.field(
        default=1800.0, converter=_session_idle, validator=_positive
    )

    @classmethod
    def of(
        cls,
        limits: Limits | None,
        fields: LimitFields | None = None,
        *,
        deprecated_in: str | None = None,
        kept: Collection[str] = (),
    ) -> Limits:
        """``limits`` (the defaults when None) with the fields given as keywords of
        their own (``LimitFields``) applied on top.

        ``deprecated_in`` names the serve method whose keywords these are: a field
        given there but not in ``kept`` is a deprecated spelling (a warning).
        """
        base = limits if limits is not None else cls()
        if not fields:
            return base
        unknown = set(fields) - set(LimitFields.__annotations__)
        if unknown:
            raise InvalidArgument(
                f"unexpected limit keyword(s) {', '.join(sorted(unknown))}; give "
                "every other bound in limits=Limits(...)"
            )
        deprecated = sorted(set(fields) - set(kept))
        if deprecated_in is not None and deprecated:
            spelled = ", ".join(f"{name}=..." for name in deprecated)
            warnings.warn(
                f"{deprecated_in}({spelled}) is deprecated: give "
                f"limits=Limits({spelled})",
                DeprecationWarning,
                stacklevel=4,
            )
        return attrs.evolve(base, **fields)


class StdioFields(TypedDict, total=False):
    """The ``LimitFields`` that ``serve_stdio`` does not name: deprecated there."""

    max_waiting: int
    keepalive_interval: Seconds
    grace_period: Seconds


class LimitFields(StdioFields, total=False):
    """The ``Limits`` fields the serve methods, ``mount`` and ``McpTestClient`` also
    take as keywords of their own (``serve_stdio(max_concurrent=4)``): spellings of
    ``limits=Limits(max_concurrent=4)``, applied on top of ``limits=`` when both are
    given."""

    max_message_bytes: int
    max_depth: int
    max_concurrent: int

"""The open listen streams of one HTTP app, bounded per caller and in all.

A ``subscriptions/listen`` response is a long SSE stream: it holds a socket, a
descriptor and a broadcast subscription for as long as the client keeps it. It
takes no call slot (a listen never runs user code), so without a bound of its
own one client could open streams until the process runs out of descriptors
and calls on new connections fail. The app counts the open ones around each
listen request (a listen is not a call, so this is not a step of the gate): at
most ``Limits.max_listens`` per caller (its principal, else its client address,
as the rate limit keys it) and ``Limits.max_listens_total`` in all. One past
either is answered at once with HTTP 503, ``Retry-After`` and -32000 (the one
"server busy" wording); calls are never counted here and keep being served.

Each open stream holds a file descriptor, so the total is also kept to half the
process's descriptor limit (the soft ``RLIMIT_NOFILE``, read when the app is made):
with the common 1,024 (or a container's 256), listens alone could otherwise take
every descriptor and leave none for the calls the bound promises to keep serving.

Invariants:
- A stream counted in is counted out however it ends: its result sent, the
  client gone, the app shut down, the request failing its checks, an error.
- A refused listen costs nothing: no count, no subscription.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from .._limits import Limits

__all__ = ["ListenBounds", "descriptor_budget"]


def descriptor_budget() -> int | None:
    """Half the process's soft descriptor limit, or None where it cannot be read
    (Windows) or is unlimited."""
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft <= 0:
        return None
    return max(1, soft // 2)


class ListenBounds:
    """The listen streams one app holds open, by caller key."""

    def __init__(self, limits: Limits, budget: int | None = None) -> None:
        self.limits = limits
        self.most = limits.max_listens_total
        """Most open streams in all: ``max_listens_total``, within ``budget``."""
        if budget is not None:
            self.most = min(self.most, budget)
        self.total = 0
        """Listen streams open now."""
        self.by_caller: dict[str, int] = {}
        """Listen streams open now, by caller key (none at zero)."""

    def refusal(self, key: str) -> str | None:
        """Why the caller ``key`` may not open one more stream now, or None."""
        limits = self.limits
        if self.total >= self.most:
            return f"{self.most} listen streams are open"
        if self.by_caller.get(key, 0) >= limits.max_listens:
            return f"{limits.max_listens} listen streams of this caller are open"
        return None

    @contextmanager
    def held(self, key: str) -> Iterator[None]:
        """Count one stream of ``key`` in for the block (``refusal`` said yes)."""
        self.total += 1
        self.by_caller[key] = self.by_caller.get(key, 0) + 1
        try:
            yield
        finally:
            self.total -= 1
            left = self.by_caller[key] - 1
            if left:
                self.by_caller[key] = left
            else:
                del self.by_caller[key]

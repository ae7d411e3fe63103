"""The invariants of wire fuzzing, and one long-lived server per transport.

Hypothesis runs each example in the test's own thread; the servers, connections and
readers live in one Trio loop in a background thread (``LoopThread``), so a server
outlives the examples and thousands of inputs cost one process start, not thousands.
A target whose server died is restarted before the next example, so Hypothesis can
shrink a crash to the smallest batch that causes it.

Each failed invariant is its own exception class, so Hypothesis reports one minimal
example per kind of failure (``report_multiple_bugs``):

- ``ServerDied``: the process exited or the serving loop raised;
- ``MalformedOutput``: an emitted message is not UTF-8, not strict JSON, not a
  JSON-RPC object, or (HTTP) not a JSON or SSE response;
- ``OutputSchemaViolation``: it does not validate against the revision's schema;
- ``MissingReply`` / ``ExtraReply``: a request with a readable id was not answered
  exactly once, or a message without one did not get exactly one id-less error;
- ``MemoryGrowth``: the server's resident set grew past ``RSS_ALLOWANCE``.
"""

from __future__ import annotations

import collections
import json
import os
import threading
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar

import attrs
import trio
from fuzz_inputs import Call, Item, Mutated, encode_item, with_variants
from hypothesis import HealthCheck, settings

from trio_mcp.testing import SchemaViolation, check_message

T = TypeVar("T")

MAX_DEPTH = 128
#: How long a batch may take to be answered before replies count as missing.
ANSWER_WITHIN = 30.0
#: Resident-set growth allowed over the first measurement after (re)start.
RSS_ALLOWANCE = 64 * 1024 * 1024
#: Characters of the server's stderr kept for failure messages.
STDERR_TAIL = 4000


class WireInvariantFailed(AssertionError):
    """Base of the invariant failures; one subclass per kind."""


class ServerDied(WireInvariantFailed):
    """The server process exited, or its serving loop raised."""


class MalformedOutput(WireInvariantFailed):
    """An emitted message is not valid UTF-8 JSON-RPC."""


class OutputSchemaViolation(WireInvariantFailed):
    """An emitted message does not validate against the revision's schema."""


class MissingReply(WireInvariantFailed):
    """A message that must be answered was not."""


class ExtraReply(WireInvariantFailed):
    """A request was answered more than once, or something unasked was answered."""


class MemoryGrowth(WireInvariantFailed):
    """The server's resident set grew past the allowance."""


# -- what each message must get --------------------------------------------------------
@attrs.frozen
class Blank:
    """A blank line on stdio: ignored, no reply."""


@attrs.frozen
class Quiet:
    """A notification: no reply, ever."""


@attrs.frozen
class Idless:
    """Unreadable (oversized, not JSON, too deep, no readable id): one id-less error."""


@attrs.frozen
class Answer:
    """A message with a readable id: exactly one response with that id."""

    key: tuple[str, str | int]
    method: str | None


Expect = Blank | Quiet | Idless | Answer


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _unique_members(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    names = [name for name, _ in pairs]
    if len(set(names)) != len(names):
        raise ValueError("a member name appears twice in one object")
    return dict(pairs)


def strict_json(data: bytes | str) -> Any:
    """Decode strict JSON (no NaN, no Infinity, no member name twice in an object);
    bytes must be valid UTF-8."""
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    return json.loads(
        text, parse_constant=_reject_constant, object_pairs_hook=_unique_members
    )


def _too_deep(value: Any, limit: int) -> bool:
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children: Iterable[Any] = ()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((c, depth + 1) for c in children)
    return False


def id_key(value: Any) -> tuple[str, str | int] | None:
    """A request id as a dict key (``1`` and ``"1"`` differ); None if unreadable."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    return ("s" if isinstance(value, str) else "i", value)


def expect(frame: bytes, *, limit: int | None, blank_lines: bool) -> Expect:
    """What JSON-RPC requires in answer to one framed message."""
    if limit is not None and len(frame) > limit:
        return Idless()
    if blank_lines and not frame.strip(b" \t\r\n"):
        return Blank()
    try:
        value = strict_json(frame)
    except (ValueError, RecursionError):
        return Idless()
    if _too_deep(value, MAX_DEPTH) or not isinstance(value, dict):
        return Idless()
    key = id_key(value.get("id"))
    if key is not None:
        method = value.get("method")
        return Answer(key, method if isinstance(method, str) else None)
    if (
        "id" not in value
        and value.get("jsonrpc") == "2.0"
        and isinstance(value.get("method"), str)
    ):
        return Quiet()
    return Idless()


def cancelled_key(frame: bytes) -> tuple[str, str | int] | None:
    """The id a well-formed ``notifications/cancelled`` names, if it is one."""
    try:
        value = strict_json(frame)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict) or "id" in value:
        return None
    if value.get("method") != "notifications/cancelled":
        return None
    params = value.get("params")
    return id_key(params.get("requestId")) if isinstance(params, dict) else None


# -- the ledger of one connection -------------------------------------------------------
@attrs.define
class Ledger:
    """Every request sent and every reply received on one connection, checked."""

    limit: int | None
    blank_lines: bool
    sent: collections.Counter[tuple[str, str | int]] = attrs.field(
        factory=collections.Counter
    )
    answered: collections.Counter[tuple[str, str | int]] = attrs.field(
        factory=collections.Counter
    )
    methods: dict[tuple[str, str | int], str | None] = attrs.field(factory=dict)
    cancelled: set[tuple[str, str | int]] = attrs.field(factory=set)
    idless_expected: int = 0
    idless_seen: int = 0

    def outgoing(self, frame: bytes) -> Expect:
        """Record a frame about to be sent; return what it must get."""
        what = expect(frame, limit=self.limit, blank_lines=self.blank_lines)
        if isinstance(what, Answer):
            self.sent[what.key] += 1
            self.methods[what.key] = what.method
        elif isinstance(what, Idless):
            self.idless_expected += 1
        elif isinstance(what, Quiet) and (key := cancelled_key(frame)) is not None:
            self.cancelled.add(key)
        return what

    def incoming(self, data: bytes) -> dict[str, Any]:
        """Check one emitted message and count it; return it decoded."""
        try:
            message = strict_json(data)
        except (ValueError, RecursionError) as exc:
            raise MalformedOutput(
                f"the server emitted a message that is not UTF-8 JSON ({exc}): "
                f"{data[:300]!r}"
            ) from None
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            raise MalformedOutput(f"not a JSON-RPC message: {data[:300]!r}")
        key = id_key(message.get("id"))
        try:
            check_message(message, self.methods.get(key) if key else None)
        except SchemaViolation as exc:
            raise OutputSchemaViolation(str(exc)) from None
        if "method" in message:
            return message
        if key is None:
            self.idless_seen += 1
            if self.idless_seen > self.idless_expected:
                raise ExtraReply(f"an id-less error nothing asked for: {data[:300]!r}")
            return message
        self.answered[key] += 1
        if self.answered[key] > self.sent[key]:
            raise ExtraReply(
                f"id {key[1]!r} answered {self.answered[key]} times, "
                f"sent {self.sent[key]} times: {data[:300]!r}"
            )
        return message

    def forgive(self) -> None:
        """After a failed batch: what it still owes may arrive late, at most once."""
        self.cancelled.update(k for k, n in self.sent.items() if self.answered[k] < n)
        most = max(self.idless_expected, self.idless_seen)
        self.idless_expected = self.idless_seen = most

    def unanswered(self, keys: Iterable[tuple[str, str | int]]) -> list[Any]:
        """The ids among ``keys`` still owed a reply (cancelled ones owe none)."""
        return [
            k[1]
            for k in set(keys)
            if k not in self.cancelled and self.answered[k] < self.sent[k]
        ]

    def settled(self, keys: Iterable[tuple[str, str | int]]) -> bool:
        """Whether every reply owed for ``keys`` and every id-less error has arrived."""
        return not self.unanswered(keys) and self.idless_seen >= self.idless_expected

    def check_settled(self, keys: Iterable[tuple[str, str | int]], where: str) -> None:
        """Raise ``MissingReply`` naming what is still owed."""
        missing = self.unanswered(keys)
        if missing:
            raise MissingReply(f"{where}: no reply for ids {missing[:10]!r}")
        if self.idless_seen != self.idless_expected:
            raise MissingReply(
                f"{where}: {self.idless_expected - self.idless_seen} unreadable "
                "messages got no id-less error reply"
            )


# -- batches ------------------------------------------------------------------------------
@attrs.frozen
class Batch:
    """A drawn batch as bytes, with the sentinel request that must end it."""

    frames: list[bytes]
    ids: list[str]
    sentinel: bytes
    sentinel_key: tuple[str, str | int]


_batch_numbers = iter(range(1, 1 << 62))


def build_batch(items: list[Item], *, variants: bool = True) -> Batch:
    """Encode ``items``; valid requests get ids unique across the whole run.

    With ``variants`` each valid request is followed by its variants
    (``with_variants``). ``ids[i]`` is the id given to the i-th message.
    """
    number = next(_batch_numbers)
    if variants:
        items = [variant for item in items for variant in with_variants(item)]
    ids = [f"b{number}-{i}" for i in range(len(items))]
    frames = [
        encode_item(item, rid) if isinstance(item, Call | Mutated) else item.data
        for rid, item in zip(ids, items, strict=True)
    ]
    sentinel_id = f"b{number}-end"
    sentinel = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": sentinel_id,
            "method": "server/discover",
            "params": {
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                }
            },
        }
    ).encode()
    return Batch(frames, ids, sentinel, ("s", sentinel_id))


# -- a Trio loop that outlives the examples ----------------------------------------------
class LoopThread:
    """A Trio loop in a daemon thread; ``run`` calls an async function in it."""

    def __init__(self) -> None:
        self._ready = threading.Event()
        self._token: trio.lowlevel.TrioToken | None = None
        self._stop: trio.Event | None = None
        self.nursery: trio.Nursery | None = None
        self._thread = threading.Thread(
            target=trio.run, args=(self._main,), daemon=True
        )
        self._thread.start()
        if not self._ready.wait(30):
            raise RuntimeError("the fuzz loop thread did not start")

    async def _main(self) -> None:
        self._token = trio.lowlevel.current_trio_token()
        self._stop = trio.Event()
        async with trio.open_nursery() as nursery:
            self.nursery = nursery
            self._ready.set()
            await self._stop.wait()
            nursery.cancel_scope.cancel()

    def run(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        """Run ``await fn(*args)`` in the loop and return its result."""
        return trio.from_thread.run(fn, *args, trio_token=self._token)

    def close(self) -> None:
        """Cancel everything in the loop and wait for the thread."""
        assert self._stop is not None
        trio.from_thread.run_sync(self._stop.set, trio_token=self._token)
        self._thread.join(30)


def rss_bytes(pid: int) -> int:
    """The resident set of process ``pid``, from ``/proc``."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


@attrs.define
class RssWatch:
    """The first measurement after (re)start, and the allowance over it."""

    baseline: int | None = None

    def check(self, pid: int) -> None:
        """Raise ``MemoryGrowth`` if the resident set grew past the allowance."""
        now = rss_bytes(pid)
        if self.baseline is None:
            self.baseline = now
        elif now - self.baseline > RSS_ALLOWANCE:
            raise MemoryGrowth(
                f"resident set grew from {self.baseline >> 20} MiB to {now >> 20} MiB"
            )


def fuzz_deadline() -> float | None:
    """Seconds each fuzz test runs for under ``scripts/fuzz``; None for one CI round."""
    value = os.environ.get("TRIO_MCP_FUZZ_SECONDS")
    return float(value) if value else None


def run_rounds(prop: Callable[[], None]) -> None:
    """Run a Hypothesis property once (CI), or round after round until the deadline."""
    seconds = fuzz_deadline()
    if seconds is None:
        prop()
        return
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        prop()


# -- Hypothesis profiles -----------------------------------------------------------------
#: ``wire``: one round per test, sized for at least ``MIN_INPUTS`` messages per transport
#: within a few minutes. It builds on the default settings, so under CI (where
#: Hypothesis loads its own ``ci`` profile) the round is derandomized like every other
#: property: a landing is judged on the same inputs each time, and exploring belongs to
#: ``wire-long`` (``scripts/fuzz --minutes N``), rounds of fresh examples repeated until
#: ``TRIO_MCP_FUZZ_SECONDS`` run out. Neither is named ``ci``: that would replace
#: Hypothesis's own profile for the whole run.
settings.register_profile(
    "wire",
    settings.default,
    max_examples=200,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "wire-long", settings.get_profile("wire"), max_examples=1000, derandomize=False
)

#: Messages each wire test must have sent (and seen answered) in one CI round.
MIN_INPUTS = 10_000


def fuzz_settings(share: float = 1.0) -> settings:
    """The profile named by ``TRIO_MCP_FUZZ_PROFILE`` (default ``wire``).

    ``share`` scales its ``max_examples``, for tests that are many (one per type).
    """
    profile = settings.get_profile(os.environ.get("TRIO_MCP_FUZZ_PROFILE", "wire"))
    return settings(profile, max_examples=max(1, int(profile.max_examples * share)))

"""``RedisStore``: rate-limit buckets, task records and the broadcast, shared by Redis.

Every worker and replica that names the same Redis (and prefix) shares:

- the rate-limit buckets: one Lua script (``BUCKET_SCRIPT``) reads, refills, takes
  and writes a bucket atomically on the server, with the server's clock, so two
  processes can never both take the last token; a process takes a few tokens at
  once (``lease_size``) so most calls need no round trip;
- the task records: each change of a task is written as a snapshot (its owner, the
  ``DetailedTask`` view, a version) by a second script (``SAVE_SCRIPT``) that keeps
  the newest version of the attempt holding the task's fencing number only, never
  changes a finished task, sets the record's expiry and publishes the change, so
  ``tasks/get`` and listen streams on any process see it; who runs each task is a
  lease renewed at each beat (``_leases``: a task whose lease ran out is claimed,
  and resumed or failed, by another process);
- requests for a task running elsewhere (``tasks/update``, ``tasks/cancel``): the
  asking process pushes them to the inbox list of the process that runs the task
  and waits (bounded) for the answer on a reply list;
- the broadcast (``broadcast()`` makes the ``RedisBroadcast`` on the same URL);
- for other parts of the server (the handshake-era HTTP sessions): Lua scripts
  (``run_script``), requests to one process by its inbox (an op whose ``to`` names a
  handler in ``handlers``) and notices to every process (``notify``, read by the
  handlers in ``notices`` from one more channel).

Invariants:
- Nothing here waits longer than ``timeout`` for Redis: a command that does not
  answer in time raises ``StoreUnavailable``, which task calls turn into a clear
  -32603 answer. Commands are never retried blindly; the next call tries again, so
  the store recovers as soon as Redis does.
- Background work (writing queued snapshots, reading the change channel and the
  inbox, the heartbeat) runs in sessions of the shared ``RedisConnection``
  (``trio_mcp._redis``, also the broadcast's): it reconnects with a doubling delay
  and never raises into the server.
- Snapshots queued while Redis is down are kept (the newest per task) and written
  once it is back.

coredis is imported only when ``running()`` starts (the ``redis`` extra).
"""

from __future__ import annotations

import json
import logging
import math
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Final, NoReturn

import attrs
import trio

from .. import _checks as checks
from .._instance import instance_id
from .._json import JsonObject
from .._rate_limit import RateLimit
from .._redis import RedisConnection, reason
from ._leases import TaskLeases
from ._memory import Store

if TYPE_CHECKING:
    import coredis

    from .._changes._redis import RedisBroadcast

__all__ = [
    "BUCKET_SCRIPT",
    "SAVE_SCRIPT",
    "RedisStore",
    "StoreUnavailable",
    "TaskWrite",
]

log = logging.getLogger("trio_mcp.store")

#: KEYS[1] the bucket; ARGV rate (tokens/s), capacity, most tokens wanted. Takes
#: up to that many whole tokens and returns how many as a string, or, when not one
#: is there, minus the seconds until one is ("-0.25"): Lua numbers would be
#: truncated to integers.
BUCKET_SCRIPT: Final = """
local rate = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2])
local want = tonumber(ARGV[3])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local held = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(held[1])
if tokens == nil then
  tokens = capacity
else
  tokens = math.min(capacity, tokens + math.max(0, now - tonumber(held[2])) * rate)
end
local answer
if tokens >= 1 then
  local granted = math.min(want, math.floor(tokens))
  tokens = tokens - granted
  answer = tostring(granted)
else
  answer = tostring(-(1 - tokens) / rate)
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(capacity / rate * 1000) + 1000)
return answer
"""

#: Most tokens one process takes from a shared bucket at once (its lease).
MAX_LEASE: Final = 16
#: Callers whose leased tokens a process keeps at once.
MAX_LEASES: Final = 100_000

#: KEYS[1] the task, KEYS[2] the leases; ARGV version, snapshot, expiry (ms),
#: channel, message, fence, terminal ('1' or '0'), id. Writes only a newer version
#: of the attempt that holds the task's fence, and never over a finished task;
#: returns 1 if it wrote, 0 for an older version, -1 for a write fenced out.
SAVE_SCRIPT: Final = """
local held = redis.call('HMGET', KEYS[1], 'fence', 'terminal', 'version')
if held[1] ~= ARGV[6] or held[2] == '1' then
  return -1
end
if held[3] and tonumber(held[3]) >= tonumber(ARGV[1]) then
  return 0
end
redis.call('HSET', KEYS[1], 'version', ARGV[1], 'snapshot', ARGV[2], 'terminal', ARGV[7])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
if ARGV[7] == '1' then
  redis.call('ZREM', KEYS[2], ARGV[8])
end
redis.call('PUBLISH', ARGV[4], ARGV[5])
return 1
"""

#: Task views kept from the change channel, for listen streams (newest first out).
MAX_CACHED_VIEWS: Final = 10_000

OpHandler = Callable[[JsonObject], Awaitable[JsonObject]]
ChangeHandler = Callable[[str], object]
NoticeHandler = Callable[[JsonObject], object]


@attrs.frozen
class TaskWrite:
    """One snapshot of a task to write, under the fence of the attempt that made it."""

    body: str
    """The snapshot as JSON text."""
    version: int
    ttl_ms: int
    """How long the record is kept from this write."""
    fence: int
    terminal: bool = False

    @classmethod
    def of(
        cls,
        snapshot: JsonObject,
        version: int,
        ttl_ms: int,
        fence: int,
        *,
        terminal: bool = False,
    ) -> TaskWrite:
        return cls(json.dumps(snapshot), version, ttl_ms, fence, terminal)


class StoreUnavailable(Exception):
    """Redis did not answer (down, unreachable, or slower than ``timeout``)."""


class RedisStore(Store):
    """State shared by every worker and replica through one Redis.

    Needs the ``redis`` extra (``pip install ".[redis]"`` in a clone, or the wheel). Give it to
    ``Server(store=...)``: the rate-limit buckets, the task records (``tasks/get``,
    ``tasks/update`` and ``tasks/cancel`` work on any replica, and a finished task
    outlives its worker within its TTL) and, unless ``broadcast=`` is given, the
    broadcast are then shared. The serve methods and the mounted app's lifespan
    keep it connected (``server.task_nursery()`` for hosts without lifespan).

    Args:
        url: ``redis://[[user]:password@]host[:port][/db]``, ``rediss://`` for TLS,
            or ``unix://path``.
        prefix: Prefix of every key and channel; servers that must not share state
            (other catalogs on one Redis) use different prefixes.
        timeout: Seconds to wait for Redis before a task call fails with -32603.
        heartbeat: Seconds a task's lease lasts: a process renews the leases of
            the tasks it runs three times per ``heartbeat``; a task whose lease
            ran out is claimed by another process (resumed if it is durable and
            that process declares its tool, else ``failed``).
    """

    shared = True

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "trio-mcp",
        timeout: float = 2.0,
        heartbeat: float = 10.0,
    ) -> None:
        self.timeout = checks.positive(timeout, "RedisStore(timeout=...)")
        self.heartbeat = checks.positive(heartbeat, "RedisStore(heartbeat=...)")
        self.prefix = checks.string(prefix, "RedisStore(prefix=...)")
        self._redis = RedisConnection(
            url, owner="RedisStore", log=log, connect_timeout=self.timeout
        )
        self.url = url
        self.origin = secrets.token_hex(8)
        """This process's tag: its inbox, and its own changes on the channel."""
        self.on_op: OpHandler | None = None
        """Answers a request for a task this process runs (set by the task runner)."""
        self.on_change: ChangeHandler | None = None
        """Told of a task's change made elsewhere (set by the task runner)."""
        self.handlers: dict[str, OpHandler] = {}
        """Answer requests of other processes whose ``to`` names them (``ask_owner``)."""
        self.notices: dict[str, NoticeHandler] = {}
        """Told of notices other processes sent (``notify``), by their ``kind``;
        register before ``running()`` starts (it reads the channel only for them)."""
        self._scripts: dict[str, Any] = {}
        self._loaded: dict[str, Any] = {}
        self._unsaved: dict[str, TaskWrite] = {}
        self._wake = trio.Event()
        self.leases = TaskLeases(self, max(1, round(self.heartbeat * 1000)))
        """The task leases and their fencing numbers (``_leases``)."""
        self.on_beat: Callable[[], Awaitable[None]] | None = None
        """Run at each beat: renew the leases held, claim the ones run out (set
        by the task runner)."""
        self.on_stale: Callable[[str, int], object] | None = None
        """Told of a write fenced out: the task id and the fence it carried."""
        self._beat_now = trio.Event()
        self._views: dict[str, JsonObject] = {}
        self._leases: dict[str, tuple[float, float]] = {}
        """Tokens taken from shared buckets and not spent yet, until when."""

    def __repr__(self) -> str:
        return f"RedisStore({self.url!r}, prefix={self.prefix!r})"

    @property
    def name(self) -> str:
        """How the log names this process: ``<replica>:<pid>/<origin>``."""
        return f"{instance_id()}/{self.origin}"

    @property
    def channel(self) -> str:
        """The pub/sub channel of task changes."""
        return f"{self.prefix}:tasks"

    @property
    def notice_channel(self) -> str:
        """The pub/sub channel of ``notify``."""
        return f"{self.prefix}:notices"

    def broadcast(self) -> RedisBroadcast:
        """A ``RedisBroadcast`` on the same Redis, for ``Server(broadcast=...)``."""
        from .._changes._redis import RedisBroadcast

        return RedisBroadcast(self.url, channel=f"{self.prefix}:changes")

    # -- the connection --------------------------------------------------------------
    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Hold the client, and run the background work, for the block. A nested
        entry (one server served twice at once) shares the first one's.

        Raises:
            McpError.Transport: if coredis is not installed.
        """
        if self._redis.running_now:
            yield
            return
        work = [self._write_unsaved, self._read_changes, self._read_inbox, self._beat]
        if self.notices:
            work.append(self._read_notices)
        async with self._redis.running(*work) as client:
            self._scripts = {
                "bucket": client.register_script(BUCKET_SCRIPT),
                "save": client.register_script(SAVE_SCRIPT),
            }
            self._loaded = {}
            yield

    async def _command(
        self, run: Callable[[coredis.Redis[bytes]], Awaitable[Any]]
    ) -> Any:
        """Run one command (or script) within ``timeout``.

        Raises:
            StoreUnavailable: if it failed or took longer.
        """
        client = self._redis.client
        if client is None:
            raise StoreUnavailable("the store is not running (no task nursery is open)")
        try:
            with trio.fail_after(self.timeout):
                return await run(client)
        except trio.TooSlowError:
            raise StoreUnavailable(
                f"Redis at {self.url} did not answer within {self.timeout:g} s"
            ) from None
        except Exception as exc:
            raise StoreUnavailable(f"Redis at {self.url}: {reason(exc)}") from exc

    async def run_script(
        self, source: str, keys: list[str], args: list[str | int]
    ) -> object:
        """Run the Lua script ``source`` (loaded once per connection) within ``timeout``.

        Raises:
            StoreUnavailable: if Redis does not answer in time, or the script fails.
        """
        script = self._loaded.get(source)
        if script is None:
            client = self._redis.client
            if client is None:
                raise StoreUnavailable(
                    "the store is not running (no task nursery is open)"
                )
            script = self._loaded[source] = client.register_script(source)
        result: object = await self._command(lambda _: script(keys=keys, args=args))
        return result

    async def notify(self, kind: str, body: JsonObject) -> None:
        """Tell every other process sharing this store: ``notices[kind](body)`` runs there.

        Raises:
            StoreUnavailable: if Redis does not answer in time.
        """
        message = json.dumps({**body, "o": self.origin, "kind": kind})
        await self._command(lambda c: c.publish(self.notice_channel, message))

    # -- rate-limit buckets -------------------------------------------------------------
    async def take(self, key: str, limit: RateLimit) -> float:
        """Take a token from ``key``'s shared bucket; return 0.0, or the seconds to wait.

        A round trip to Redis per call would cost more than the call, so a process
        takes up to ``lease_size(limit)`` tokens at once and spends them locally
        for up to ``limit.per`` seconds. The shared bucket has given every one of
        them out, so the limit is never exceeded; a caller spread over several
        processes may be refused up to (lease - 1) tokens early per process.

        Raises:
            StoreUnavailable: if Redis does not answer in time.
        """
        now = trio.current_time()
        held = self._leases.get(key)
        if held is not None and held[0] >= 1 and held[1] > now:
            self._leases[key] = (held[0] - 1, held[1])
            return 0.0
        script = self._scripts.get("bucket")
        name = f"{self.prefix}:bucket:{key}"
        want = lease_size(limit)
        answer = float(
            await self._command(
                lambda _: script(  # type: ignore[misc]
                    keys=[name], args=[repr(limit.rate), limit.capacity, want]
                )
            )
        )
        if answer <= 0:
            return -answer
        self._leases.pop(key, None)
        if answer > 1:
            if len(self._leases) >= MAX_LEASES:
                del self._leases[next(iter(self._leases))]
            self._leases[key] = (answer - 1, now + limit.per)
        return 0.0

    # -- claims --------------------------------------------------------------------------
    async def claim(self, key: str, seconds: float) -> bool:
        """Claim ``key`` for ``seconds`` on every replica at once (``SET NX PX``):
        True the first time, False while claimed.

        Raises:
            StoreUnavailable: if Redis does not answer in time.
        """
        from coredis.tokens import PureToken

        name = f"{self.prefix}:claim:{key}"
        ms = max(1, math.ceil(seconds * 1000))
        answer = await self._command(
            lambda c: c.set(name, b"1", px=ms, condition=PureToken.NX)
        )
        return bool(answer)

    # -- cached values ----------------------------------------------------------------
    async def put(self, key: str, value: bytes, seconds: float) -> None:
        """Keep ``value`` for ``seconds`` on every replica (``SET PX``).

        Raises:
            StoreUnavailable: if Redis does not answer in time.
        """
        name = f"{self.prefix}:value:{key}"
        ms = max(1, math.ceil(seconds * 1000))
        await self._command(lambda c: c.set(name, value, px=ms))

    async def get(self, key: str) -> bytes | None:
        """The value kept under ``key``, or None once expired.

        Raises:
            StoreUnavailable: if Redis does not answer in time.
        """
        name = f"{self.prefix}:value:{key}"
        found = await self._command(lambda c: c.get(name))
        return found if isinstance(found, bytes) else None

    # -- task records -----------------------------------------------------------------
    def _key(self, task_id: str) -> str:
        return f"{self.prefix}:task:{task_id}"

    async def save_task(self, task_id: str, write: TaskWrite) -> bool:
        """Write a task's snapshot now and announce it; False if it was fenced out
        (another attempt holds the task, or it is finished).

        Raises:
            StoreUnavailable: if Redis does not answer in time.
        """
        self._unsaved.pop(task_id, None)
        return await self._save(task_id, write)

    def save_task_soon(self, task_id: str, write: TaskWrite) -> None:
        """Queue a task's snapshot for writing; never blocks, never fails."""
        self._unsaved[task_id] = write
        self._wake.set()

    def message(self, task_id: str, body: str) -> str:
        """The change channel's message for a snapshot written by this process."""
        return json.dumps(
            {"o": self.origin, "id": task_id, "snapshot": json.loads(body)}
        )

    async def _save(self, task_id: str, write: TaskWrite) -> bool:
        body, fence = write.body, write.fence
        script = self._scripts.get("save")
        written = await self._command(
            lambda _: script(  # type: ignore[misc]
                keys=[self.leases.task_key(task_id), self.leases.key],
                args=[
                    write.version,
                    body,
                    max(1, write.ttl_ms),
                    self.channel,
                    self.message(task_id, body),
                    fence,
                    "1" if write.terminal else "0",
                    task_id,
                ],
            )
        )
        if int(written) >= 0:
            return True
        log.warning(
            "task %s: a late write of the attempt with fence %d was discarded: "
            "another attempt holds the task, or it has finished",
            task_id,
            fence,
        )
        if self.on_stale is not None:
            self.on_stale(task_id, fence)
        return False

    async def drain(self) -> None:
        """Write every queued snapshot now (a graceful stop, before the connection
        goes). The caller bounds the time.

        Raises:
            StoreUnavailable: if Redis does not answer in time.
        """
        while self._unsaved:
            task_id = next(iter(self._unsaved))
            await self._save(task_id, self._unsaved.pop(task_id))

    @asynccontextmanager
    async def own_connection(self) -> AsyncIterator[None]:
        """Within the block, every command goes through a new client of its own.

        For a stop: the running client's connections belong to background work
        that a cancelled scope (an ASGI server ending the lifespan) may be closing,
        while a client made inside the caller's shielded scope is not cancelled
        with them.
        """
        import coredis
        from coredis.retry import NoRetryPolicy

        saved = (self._redis.client, self._scripts, self._loaded)
        client: coredis.Redis[bytes] = coredis.Redis.from_url(
            self.url, retry_policy=NoRetryPolicy(), connect_timeout=self.timeout
        )
        async with client:
            self._redis.client = client
            self._scripts = {"save": client.register_script(SAVE_SCRIPT)}
            self._loaded = {}
            try:
                yield
            finally:
                self._redis.client, self._scripts, self._loaded = saved

    def beat_now(self) -> None:
        """Run the next beat at once (a task was released: claim it now)."""
        self._beat_now.set()

    async def load_task(self, task_id: str) -> JsonObject | None:
        """A task's latest snapshot, or None if it is unknown or expired.

        Raises:
            StoreUnavailable: if Redis does not answer in time.
        """
        raw = await self._command(lambda c: c.hget(self._key(task_id), "snapshot"))
        if raw is None:
            return None
        value = json.loads(raw)
        return value if isinstance(value, dict) else None

    def cached_view(self, task_id: str) -> JsonObject | None:
        """The view of a task running elsewhere, as its last change announced it."""
        return self._views.get(task_id)

    async def ask_owner(self, origin: str, op: JsonObject) -> JsonObject:
        """Send ``op`` to the process ``origin`` (which runs the task); return its answer.

        Raises:
            StoreUnavailable: if Redis or that process does not answer in time.
        """
        reply_key = f"{self.prefix}:reply:{secrets.token_hex(12)}"
        body = json.dumps({**op, "reply": reply_key})
        inbox = f"{self.prefix}:inbox:{origin}"
        await self._command(lambda c: c.rpush(inbox, [body]))
        answer = await self._command(
            lambda c: c.blpop([reply_key], timeout=self.timeout / 2)
        )
        if answer is None:
            raise StoreUnavailable(
                "the process running this task did not answer (it may have stopped)"
            )
        value = json.loads(answer[1])
        return value if isinstance(value, dict) else {}

    async def alive(self, origin: str) -> bool:
        """Whether the process ``origin`` renewed its heartbeat lately.

        Raises:
            StoreUnavailable: if Redis does not answer in time.
        """
        found = await self._command(lambda c: c.exists([self._alive_key(origin)]))
        return bool(found)

    def _alive_key(self, origin: str) -> str:
        return f"{self.prefix}:alive:{origin}"

    # -- background work --------------------------------------------------------------------
    async def _beat(
        self,
        client: coredis.Redis[bytes],
        *,
        task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
    ) -> NoReturn:
        """Renew this process's heartbeat three times per ``heartbeat``, and the
        leases of its tasks (``on_beat``, which also claims the ones run out).

        A beat that fails ends the session (logged; run again by the connection),
        so a Redis outage is loud and ends by itself.
        """
        key = self._alive_key(self.origin)
        ms = max(1, round(self.heartbeat * 1000))
        await self._command(lambda c: c.set(key, b"1", px=ms))
        task_status.started()
        while True:
            if self.on_beat is not None:
                await self.on_beat()
            with trio.move_on_after(self.heartbeat / 3):
                await self._beat_now.wait()
            self._beat_now = trio.Event()
            await self._command(lambda c: c.set(key, b"1", px=ms))

    async def _write_unsaved(
        self,
        client: coredis.Redis[bytes],
        *,
        task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
    ) -> NoReturn:
        """Write queued snapshots, newest per task; re-queue one that fails."""
        await client.ping()
        task_status.started()
        while True:
            while self._unsaved:
                task_id = next(iter(self._unsaved))
                entry = self._unsaved.pop(task_id)
                try:
                    await self._save(task_id, entry)
                except BaseException:
                    self._unsaved.setdefault(task_id, entry)
                    raise
            self._wake = trio.Event()
            await self._wake.wait()

    async def _read_changes(
        self,
        client: coredis.Redis[bytes],
        *,
        task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
    ) -> NoReturn:
        """Keep the views of tasks changed elsewhere, and tell the task runner."""
        await self._redis.read_channel(
            self.channel, self._changed, task_status=task_status
        )

    def _changed(self, data: object) -> None:
        body = _from_elsewhere(data, self.origin)
        if body is None:
            return
        task_id, snapshot = body.get("id"), body.get("snapshot")
        if not isinstance(task_id, str) or not isinstance(snapshot, dict):
            return
        view = snapshot.get("view")
        if isinstance(view, dict):
            self._views.pop(task_id, None)
            self._views[task_id] = view
            if len(self._views) > MAX_CACHED_VIEWS:
                del self._views[next(iter(self._views))]
        if self.on_change is not None:
            self.on_change(task_id)

    async def _read_inbox(
        self,
        client: coredis.Redis[bytes],
        *,
        task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
    ) -> NoReturn:
        """Answer requests other processes send for the tasks this one runs."""
        inbox = f"{self.prefix}:inbox:{self.origin}"
        await client.ping()
        task_status.started()
        while True:
            found = await client.blpop([inbox], timeout=1)
            if found is None:
                continue
            try:
                op = json.loads(found[1])
            except ValueError:
                continue
            if not isinstance(op, dict) or not isinstance(op.get("reply"), str):
                continue
            answer: JsonObject = {"gone": True}
            to = op.get("to")
            handler = self.handlers.get(to) if isinstance(to, str) else self.on_op
            if handler is not None:
                answer = await handler(op)
            reply_key = op["reply"]
            await client.rpush(reply_key, [json.dumps(answer)])
            await client.pexpire(reply_key, 30_000)

    async def _read_notices(
        self,
        client: coredis.Redis[bytes],
        *,
        task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
    ) -> NoReturn:
        """Hand every other process's notice to its handler here."""
        await self._redis.read_channel(
            self.notice_channel, self._noticed, task_status=task_status
        )

    def _noticed(self, data: object) -> None:
        body = _from_elsewhere(data, self.origin)
        if body is None:
            return
        kind = body.get("kind")
        handler = self.notices.get(kind) if isinstance(kind, str) else None
        if handler is not None:
            handler(body)


def _from_elsewhere(data: object, origin: str) -> JsonObject | None:
    """A channel message as a JSON object, unless it is not one or this process
    (``origin``) published it: every process reads its own messages back."""
    try:
        body = json.loads(data) if isinstance(data, bytes | str) else None
    except ValueError:
        return None
    if not isinstance(body, dict) or body.get("o") == origin:
        return None
    return body


def lease_size(limit: RateLimit) -> int:
    """Tokens a process takes at once: an eighth of the bucket, 1 to ``MAX_LEASE``.

    Small buckets are taken one token at a time, so they stay exact.
    """
    return max(1, min(MAX_LEASE, limit.capacity // 8))

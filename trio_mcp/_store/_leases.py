"""Task leases and fencing numbers in Redis: who runs each task, and whose word counts.

Every task a ``RedisStore`` shares is one hash (``<prefix>:task:<id>``) and one
member of a sorted set of leases (``<prefix>:leases``) whose score is when the
lease runs out (milliseconds of the Redis server's clock, so replicas' clocks never
matter). The process running a task renews its lease at each beat; a task whose
lease ran out belongs to whoever claims it next.

Each claim increments the task's fencing number (``fence``). A write carries the
fence of the attempt that made it and is discarded unless it is still the task's
fence, and once a task is finished no write changes it: a process paused past its
lease (SIGSTOP, a long GC, a lost network) can never overwrite the outcome another
process wrote meanwhile.

What a claim does depends on the task (one Lua script decides, atomically):

- ``resume``: a durable task whose tool this process declares, attempts left: it
  runs again here, from the start (``attempts`` + 1);
- ``orphaned``: a task that is not durable: its process stopped, it fails;
- ``exhausted``: a durable task that has run ``max`` attempts: it fails;
- ``cancelled``: ``tasks/cancel`` marked it: it ends cancelled, never runs again;
- ``ttl``: its TTL has passed: it fails.

The claimer then writes the outcome under the new fence (or runs the task); if it
dies first, the lease it took runs out too and the next claimer does it again. A
durable task whose tool this process does not declare is left for another replica,
and looked at again a third of a lease later (its score is pushed back), so tasks
nobody here can run never hide the others from a bounded scan.

Keys: the hash expires with the task (``PEXPIRE`` at each write); the sorted set is
given the longest expiry of the tasks added to it, and a member goes when its task
finishes or its hash is gone. Scripts name the task hashes from the prefix they are
given, so one Redis (or a primary with replicas) holds them all; Redis Cluster is
not supported for task records.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import attrs

if TYPE_CHECKING:
    from ._redis import RedisStore

__all__ = [
    "CLAIM_SCRIPT",
    "CREATE_SCRIPT",
    "Claim",
    "Start",
    "TaskLeases",
]

_NOW: Final = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
"""

#: KEYS[1] the task, KEYS[2] the leases; ARGV snapshot, expiry (ms), channel,
#: message, lease (ms), holder, durable, tool, max attempts, start, ttl (ms), id.
CREATE_SCRIPT: Final = (
    _NOW
    + """
redis.call('HSET', KEYS[1], 'version', 1, 'snapshot', ARGV[1], 'terminal', '0',
  'fence', 1, 'attempts', 1, 'holder', ARGV[6], 'durable', ARGV[7], 'tool', ARGV[8],
  'max', ARGV[9], 'start', ARGV[10], 'until', now + tonumber(ARGV[11]),
  'cancelled', '0', 'released', '')
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[5]), ARGV[12])
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[2]) then
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
end
redis.call('PUBLISH', ARGV[3], ARGV[4])
return 1
"""
)

#: KEYS[1] the leases; ARGV lease (ms), prefix, then (id, fence) pairs. Renews the
#: leases still held under that fence; returns the ids that are not.
RENEW_SCRIPT: Final = (
    _NOW
    + """
local lost = {}
for i = 3, #ARGV, 2 do
  local held = redis.call('HMGET', ARGV[2] .. ':task:' .. ARGV[i], 'fence', 'terminal')
  if held[1] == ARGV[i + 1] and held[2] ~= '1' then
    redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[1]), ARGV[i])
  else
    table.insert(lost, ARGV[i])
  end
end
return lost
"""
)

#: KEYS[1] the leases; ARGV prefix, claimer, lease (ms), most tasks, one id or '',
#: then the durable tools the claimer declares. Returns one row per claim: id,
#: kind, fence, attempts, the last holder, who released it, snapshot, start, tool.
CLAIM_SCRIPT: Final = (
    _NOW
    + """
local ids
if ARGV[5] ~= '' then
  local score = redis.call('ZSCORE', KEYS[1], ARGV[5])
  ids = {}
  if score and tonumber(score) <= now then ids = {ARGV[5]} end
else
  ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[4]))
end
local declared = {}
for i = 6, #ARGV do declared[ARGV[i]] = true end
local out = {}
for _, id in ipairs(ids) do
  local key = ARGV[1] .. ':task:' .. id
  local h = redis.call('HMGET', key, 'terminal', 'durable', 'tool', 'attempts', 'max',
    'cancelled', 'holder', 'released', 'until')
  if h[1] == false or h[1] == '1' then
    redis.call('ZREM', KEYS[1], id)
  else
    local kind = false
    if h[6] == '1' then kind = 'cancelled'
    elseif h[9] and tonumber(h[9]) <= now then kind = 'ttl'
    elseif h[2] ~= '1' then kind = 'orphaned'
    elseif tonumber(h[4]) >= tonumber(h[5]) then kind = 'exhausted'
    elseif declared[h[3]] then kind = 'resume' end
    if kind then
      local fence = redis.call('HINCRBY', key, 'fence', 1)
      local attempts = tonumber(h[4])
      local start = ''
      if kind == 'resume' then
        attempts = redis.call('HINCRBY', key, 'attempts', 1)
        start = redis.call('HGET', key, 'start')
      end
      redis.call('HSET', key, 'holder', ARGV[2], 'version', 0, 'released', '')
      redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), id)
      table.insert(out, {id, kind, fence, attempts, h[7], h[8],
        redis.call('HGET', key, 'snapshot'), start, h[3]})
    else
      redis.call('ZADD', KEYS[1], now + math.floor(tonumber(ARGV[3]) / 3), id)
    end
  end
end
return out
"""
)

#: KEYS[1] the task, KEYS[2] the leases; ARGV fence, releaser, id. Gives the lease
#: up at once (another process may claim it now) if that fence still holds it.
RELEASE_SCRIPT: Final = """
local held = redis.call('HMGET', KEYS[1], 'fence', 'terminal')
if held[1] ~= ARGV[1] or held[2] == '1' then return 0 end
redis.call('HSET', KEYS[1], 'released', ARGV[2])
redis.call('ZADD', KEYS[2], 'XX', 0, ARGV[3])
return 1
"""

#: KEYS[1] the task. Marks an unfinished task cancelled: no attempt runs again.
CANCEL_SCRIPT: Final = """
local terminal = redis.call('HGET', KEYS[1], 'terminal')
if terminal == false or terminal == '1' then return 0 end
redis.call('HSET', KEYS[1], 'cancelled', '1')
return 1
"""

#: Most expired leases one claim looks at.
CLAIM_BATCH: Final = 64


@attrs.frozen
class Start:
    """What a new task's hash holds beside its snapshot."""

    durable: bool
    tool: str
    max_attempts: int
    start: str
    """The sealed start of a durable task (tool, arguments, authority); '' if not."""
    ttl_ms: int


@attrs.frozen
class Claim:
    """One task this process claimed, and what it must do with it."""

    task_id: str
    kind: str
    """``resume``, ``orphaned``, ``exhausted``, ``cancelled`` or ``ttl``."""
    fence: int
    attempts: int
    holder: str
    """The process that held it last (``RedisStore.name``)."""
    released: str
    """That process's tag if it gave the task up (a graceful stop); else ''."""
    snapshot: str
    start: str
    tool: str


def _text(value: object) -> str:
    if isinstance(value, bytes):
        return value.decode()
    return "" if value is None or value is False else str(value)


@attrs.define(eq=False)
class TaskLeases:
    """The lease scripts of one ``RedisStore`` (its ``leases``)."""

    store: RedisStore
    lease_ms: int

    @property
    def key(self) -> str:
        """The sorted set of leases."""
        return f"{self.store.prefix}:leases"

    def task_key(self, task_id: str) -> str:
        return f"{self.store.prefix}:task:{task_id}"

    async def create(
        self, task_id: str, snapshot: str, message: str, ttl_ms: int, start: Start
    ) -> None:
        """Write a new task, held by this process under fence 1.

        Raises:
            StoreUnavailable: if Redis does not answer in time.
        """
        store = self.store
        await store.run_script(
            CREATE_SCRIPT,
            [self.task_key(task_id), self.key],
            [
                snapshot,
                max(1, ttl_ms),
                store.channel,
                message,
                self.lease_ms,
                store.name,
                "1" if start.durable else "0",
                start.tool,
                start.max_attempts,
                start.start,
                start.ttl_ms,
                task_id,
            ],
        )

    async def renew(self, held: dict[str, int]) -> list[str]:
        """Renew the leases of ``held`` (task id -> fence); the ids no longer held.

        Raises:
            StoreUnavailable: if Redis does not answer in time.
        """
        if not held:
            return []
        args: list[str | int] = [self.lease_ms, self.store.prefix]
        for task_id, fence in held.items():
            args += [task_id, fence]
        lost = await self.store.run_script(RENEW_SCRIPT, [self.key], args)
        return [_text(t) for t in lost] if isinstance(lost, list) else []

    async def claim(
        self, tools: list[str], task_id: str = "", batch: int = CLAIM_BATCH
    ) -> list[Claim]:
        """Claim tasks whose lease ran out (only ``task_id``, if given).

        Raises:
            StoreUnavailable: if Redis does not answer in time.
        """
        store = self.store
        rows = await store.run_script(
            CLAIM_SCRIPT,
            [self.key],
            [store.prefix, store.name, self.lease_ms, batch, task_id, *tools],
        )
        claims = []
        for row in rows if isinstance(rows, list) else []:
            (tid, kind, fence, attempts, holder, released, snap, start, tool) = row
            claims.append(
                Claim(
                    _text(tid),
                    _text(kind),
                    int(fence),
                    int(attempts),
                    _text(holder),
                    _text(released),
                    _text(snap),
                    _text(start),
                    _text(tool),
                )
            )
        return claims

    async def release(self, task_id: str, fence: int) -> bool:
        """Give a task's lease up now, if ``fence`` still holds it.

        Raises:
            StoreUnavailable: if Redis does not answer in time.
        """
        done = await self.store.run_script(
            RELEASE_SCRIPT,
            [self.task_key(task_id), self.key],
            [fence, self.store.name, task_id],
        )
        return bool(done)

    async def mark_cancelled(self, task_id: str) -> bool:
        """Mark an unfinished task cancelled: whoever claims it next ends it.

        Raises:
            StoreUnavailable: if Redis does not answer in time.
        """
        done = await self.store.run_script(CANCEL_SCRIPT, [self.task_key(task_id)], [])
        return bool(done)

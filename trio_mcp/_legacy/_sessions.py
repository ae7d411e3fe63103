"""Handshake-era Streamable HTTP sessions: where each ``Mcp-Session-Id`` is kept.

A session is what ``initialize`` settled (a ``Session``), the digest of the principal
that opened it (``owner``: another principal's use of the id finds nothing), its open
``GET`` stream (a token naming the process that holds it), and the caller it counts
against (the rate limit's key), so no caller can push the others out. Two tables:

- ``MemorySessions`` (the default store): this process's memory, least recently used
  first, so expiry and eviction look at the front only;
- ``RedisSessions`` (``store=RedisStore(url)``): any replica serves any request of a
  session; each operation is one Lua script, atomic, on the server's clock. Under the
  store's prefix: ``session:<id>`` a hash (owner, revision, capabilities, client
  info, log level, stream token, caller) and ``session:<id>:subs`` its URIs, both
  expiring ``session_idle`` after the last use; ``sessions`` (all ids) and
  ``sessions:caller:<caller>`` (one caller's) sorted by last use (the counter
  ``sessions:clock``), the indexes that bound the counts; a stale id leaves them
  when the count is next taken.

Invariants: an unknown, expired, closed or foreign id finds None (404); only its
owner's lookup refreshes a session; at most ``max_sessions`` sessions, a caller at
most ``max_sessions_per_caller``, a session at most ``MAX_SUBSCRIPTIONS`` URIs; a new
session only ever ends its own caller's (least recently used first), and is refused
(``SessionsFull``) when the store is full of others'.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections import OrderedDict
from typing import TYPE_CHECKING, Final

import attrs
import trio

from .._context import principal_id
from .._json import JsonObject
from .._limits import Limits
from ._session import MAX_SUBSCRIPTIONS, Session

if TYPE_CHECKING:
    from .._store import RedisStore

__all__ = [
    "MemorySessions",
    "Record",
    "RedisSessions",
    "Sessions",
    "SessionsFull",
    "TooManySubscriptions",
    "new_session_id",
    "owner_of",
]


def new_session_id() -> str:
    """A fresh ``Mcp-Session-Id``: 192 random bits in visible ASCII (base64url)."""
    return secrets.token_urlsafe(24)


def owner_of(principal: object | None) -> str:
    """The digest a session is bound to: its principal's id (``-`` when anonymous)."""
    who = principal_id(principal)
    if who is None:
        return "-"
    digest = hashlib.sha256(who.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:32]


class TooManySubscriptions(Exception):
    """A ``resources/subscribe`` beyond ``MAX_SUBSCRIPTIONS`` for one session."""


class SessionsFull(Exception):
    """``max_sessions`` are open and none is the new session's caller's: opening
    one would end another caller's session, so it is refused (503)."""


@attrs.frozen
class Record:
    """One session as a table holds it."""

    session: Session
    owner: str
    stream: str | None = None
    """The token of the open ``GET`` stream (``<origin>/<nonce>``), if any."""


@attrs.define(eq=False)
class _Entry:
    record: Record
    used: float
    caller: str


class MemorySessions:
    """Sessions in this process's memory, least recently used first (in all and
    per caller). Its methods' docstrings are the interface both tables keep."""

    def __init__(self) -> None:
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._callers: dict[str, OrderedDict[str, None]] = {}
        """Each caller's session ids, least recently used first."""

    def __len__(self) -> int:
        return len(self._entries)

    async def open(
        self, session: Session, owner: str, caller: str, limits: Limits
    ) -> str:
        """Keep a new session of ``caller``; return its id.

        The caller's least recently used sessions go first while it holds
        ``max_sessions_per_caller``, or while the store holds ``max_sessions``.

        Raises:
            SessionsFull: if the store is full and ``caller`` holds none of it.
        """
        await trio.lowlevel.checkpoint()
        now = trio.current_time()
        self._expire(now, limits.session_idle)
        own = self._callers.get(caller, OrderedDict())
        while own and (
            len(own) >= limits.max_sessions_per_caller
            or len(self._entries) >= limits.max_sessions
        ):
            self._drop(next(iter(own)))
        if len(self._entries) >= limits.max_sessions:
            raise SessionsFull
        sid = new_session_id()
        self._entries[sid] = _Entry(Record(session, owner), now, caller)
        self._callers.setdefault(caller, own)[sid] = None
        return sid

    def _drop(self, sid: str) -> None:
        entry = self._entries.pop(sid)
        own = self._callers[entry.caller]
        del own[sid]
        if not own:
            del self._callers[entry.caller]

    def _expire(self, now: float, idle: float) -> None:
        while self._entries:
            sid, oldest = next(iter(self._entries.items()))
            if oldest.used + idle > now:
                return
            self._drop(sid)

    async def find(self, sid: str, owner: str, limits: Limits) -> Record | None:
        """The session ``sid`` of ``owner``, refreshed; None if there is none."""
        # No checkpoint: a lookup in memory; every request it serves has its own.
        entry = self._entries.get(sid)
        if entry is None or entry.record.owner != owner:
            return None
        now = trio.current_time()
        if entry.used + limits.session_idle <= now:
            self._drop(sid)
            return None
        entry.used = now
        self._entries.move_to_end(sid)
        self._callers[entry.caller].move_to_end(sid)
        return entry.record

    def _change(self, sid: str, **changes: object) -> bool:
        entry = self._entries.get(sid)
        if entry is None:
            return False
        entry.record = attrs.evolve(entry.record, **changes)  # type: ignore[arg-type]
        return True

    async def set_level(self, sid: str, level: str) -> bool:
        """Set the session's log level; False if it is gone."""
        await trio.lowlevel.checkpoint()
        entry = self._entries.get(sid)
        if entry is None:
            return False
        session = attrs.evolve(entry.record.session, log_level=level)
        return self._change(sid, session=session)

    async def subscribe(
        self, sid: str, uri: str, wanted: bool, limits: Limits
    ) -> bool | None:
        """Add (``wanted``) or remove ``uri``; whether the set changed, None if gone.

        Raises:
            TooManySubscriptions: if adding it would pass ``MAX_SUBSCRIPTIONS``.
        """
        await trio.lowlevel.checkpoint()
        entry = self._entries.get(sid)
        if entry is None:
            return None
        session = entry.record.session
        held = session.subscriptions
        if wanted and uri not in held and len(held) >= MAX_SUBSCRIPTIONS:
            raise TooManySubscriptions(uri)
        new = held | {uri} if wanted else held - {uri}
        if new == held:
            return False
        self._change(sid, session=attrs.evolve(session, subscriptions=new))
        return True

    async def close(self, sid: str) -> bool:
        """End the session; whether it existed."""
        await trio.lowlevel.checkpoint()
        if sid not in self._entries:
            return False
        self._drop(sid)
        return True

    async def claim_stream(
        self, sid: str, token: str, stale: str | None = None
    ) -> bool | None:
        """Mark ``token``'s stream as the session's one ``GET`` stream: False if
        another live one holds it (not ``stale``, known dead), None if it is gone."""
        await trio.lowlevel.checkpoint()
        entry = self._entries.get(sid)
        if entry is None:
            return None
        if entry.record.stream not in (None, stale):
            return False
        return self._change(sid, stream=token)

    async def release_stream(self, sid: str, token: str) -> None:
        """The stream ``token`` ended: the session has no ``GET`` stream now."""
        await trio.lowlevel.checkpoint()
        entry = self._entries.get(sid)
        if entry is not None and entry.record.stream == token:
            self._change(sid, stream=None)


# -- Redis ------------------------------------------------------------------------------
#: KEYS index, hash, clock, the caller's set; ARGV id, idle ms, max sessions, key
#: prefix of sessions, max sessions per caller, then the hash's field/value pairs.
#: Stale ids (expired sessions) leave the caller's set and the front of the index
#: (an expired session is the least recently used of all); then the caller's least
#: recently used sessions go while it holds its share or the store is full; then the
#: new session is kept, or, the store still full of others' sessions, refused (-1).
#: Returns how many of the caller's sessions were dropped. The sets' scores come
#: from a counter (``clock``): uses within one millisecond keep their order.
OPEN_SCRIPT: Final = """
local function drop(sid)
  redis.call('ZREM', KEYS[1], sid)
  redis.call('ZREM', KEYS[4], sid)
  redis.call('DEL', ARGV[4] .. sid, ARGV[4] .. sid .. ':subs')
end
for _, sid in ipairs(redis.call('ZRANGE', KEYS[4], 0, -1)) do
  if redis.call('EXISTS', ARGV[4] .. sid) == 0 then drop(sid) end
end
while true do
  local first = redis.call('ZRANGE', KEYS[1], 0, 0)[1]
  if not first or redis.call('EXISTS', ARGV[4] .. first) == 1 then break end
  drop(first)
end
local most, share = tonumber(ARGV[3]), tonumber(ARGV[5])
local dropped = 0
while true do
  local held = redis.call('ZCARD', KEYS[4])
  if held == 0 or (held < share and redis.call('ZCARD', KEYS[1]) < most) then break end
  drop(redis.call('ZRANGE', KEYS[4], 0, 0)[1])
  dropped = dropped + 1
end
if redis.call('ZCARD', KEYS[1]) >= most then
  return -1
end
redis.call('HSET', KEYS[2], unpack(ARGV, 6))
redis.call('PEXPIRE', KEYS[2], ARGV[2])
local used = redis.call('INCR', KEYS[3])
redis.call('ZADD', KEYS[1], used, ARGV[1])
redis.call('ZADD', KEYS[4], used, ARGV[1])
redis.call('PEXPIRE', KEYS[4], ARGV[2])
return dropped
"""

#: KEYS index, hash, subs, clock; ARGV id, idle ms, owner. The session's fields and
#: URIs, refreshed (in the index and its caller's set too); false when it is unknown
#: (its index entry goes) or not the owner's.
FIND_SCRIPT: Final = """
local fields = redis.call('HGETALL', KEYS[2])
if #fields == 0 then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return false
end
if redis.call('HGET', KEYS[2], 'owner') ~= ARGV[3] then
  return false
end
redis.call('PEXPIRE', KEYS[2], ARGV[2])
redis.call('PEXPIRE', KEYS[3], ARGV[2])
local used = redis.call('INCR', KEYS[4])
redis.call('ZADD', KEYS[1], 'XX', used, ARGV[1])
local callers = redis.call('HGET', KEYS[2], 'callers')
if callers then
  redis.call('ZADD', callers, 'XX', used, ARGV[1])
  redis.call('PEXPIRE', callers, ARGV[2])
end
return {fields, redis.call('SMEMBERS', KEYS[3])}
"""

#: KEYS hash; ARGV field, value. 1 if set, 0 if the session is gone.
SET_SCRIPT: Final = """
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
"""

#: KEYS hash, subs; ARGV uri, max, idle ms, "1" to add or "0" to remove. 1 if the
#: set changed, 0 if not, -1 if full, -2 if the session is gone.
SUBSCRIBE_SCRIPT: Final = """
if redis.call('EXISTS', KEYS[1]) == 0 then
  return -2
end
if ARGV[4] == '0' then
  return redis.call('SREM', KEYS[2], ARGV[1])
end
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1 then
  return 0
end
if redis.call('SCARD', KEYS[2]) >= tonumber(ARGV[2]) then
  return -1
end
redis.call('SADD', KEYS[2], ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return 1
"""

#: KEYS index, hash, subs; ARGV id. 1 if the session existed.
CLOSE_SCRIPT: Final = """
local callers = redis.call('HGET', KEYS[2], 'callers')
if callers then
  redis.call('ZREM', callers, ARGV[1])
end
redis.call('ZREM', KEYS[1], ARGV[1])
return redis.call('DEL', KEYS[2], KEYS[3]) > 0 and 1 or 0
"""

#: KEYS hash; ARGV token, alive-key prefix, a stale token (or ""). 1 if claimed, 0
#: if a live process holds it (its heartbeat key exists), -1 if the session is gone.
CLAIM_SCRIPT: Final = """
if redis.call('EXISTS', KEYS[1]) == 0 then
  return -1
end
local held = redis.call('HGET', KEYS[1], 'stream')
if held and held ~= '' and held ~= ARGV[3] then
  local origin = string.match(held, '^([^/]+)/')
  if origin and redis.call('EXISTS', ARGV[2] .. origin) == 1 then
    return 0
  end
end
redis.call('HSET', KEYS[1], 'stream', ARGV[1])
return 1
"""

#: KEYS hash; ARGV token. Clears the stream token if it is still this one.
RELEASE_SCRIPT: Final = """
if redis.call('HGET', KEYS[1], 'stream') == ARGV[1] then
  redis.call('HSET', KEYS[1], 'stream', '')
end
return 0
"""


class RedisSessions:
    """Sessions in a ``RedisStore``, shared by every replica and worker.

    Raises ``StoreUnavailable`` (from every method) when Redis does not answer.
    """

    def __init__(self, store: RedisStore) -> None:
        self.store = store
        self.prefix = f"{store.prefix}:session:"
        self.index = f"{store.prefix}:sessions"
        self.clock = f"{store.prefix}:sessions:clock"

    def _keys(self, sid: str) -> list[str]:
        return [self.index, self.prefix + sid, f"{self.prefix}{sid}:subs"]

    async def open(
        self, session: Session, owner: str, caller: str, limits: Limits
    ) -> str:
        sid = new_session_id()
        callers = f"{self.index}:caller:{caller}"
        fields: list[str | int] = [
            "owner",
            owner,
            "callers",
            callers,
            "revision",
            session.revision,
            "capabilities",
            json.dumps(session.capabilities),
            "client_info",
            json.dumps(session.client_info),
            "level",
            session.log_level or "",
            "stream",
            "",
        ]
        dropped = await self.store.run_script(
            OPEN_SCRIPT,
            [self.index, self.prefix + sid, self.clock, callers],
            [
                sid,
                _ms(limits.session_idle),
                limits.max_sessions,
                self.prefix,
                limits.max_sessions_per_caller,
                *fields,
            ],
        )
        if _int(dropped) < 0:
            raise SessionsFull
        return sid

    async def find(self, sid: str, owner: str, limits: Limits) -> Record | None:
        found = await self.store.run_script(
            FIND_SCRIPT,
            [*self._keys(sid), self.clock],
            [sid, _ms(limits.session_idle), owner],
        )
        if not isinstance(found, list) or len(found) != 2:
            return None
        raw, uris = found
        fields = {_text(raw[i]): _text(raw[i + 1]) for i in range(0, len(raw) - 1, 2)}
        return _record(fields, frozenset(_text(u) for u in uris))

    async def set_level(self, sid: str, level: str) -> bool:
        done = await self.store.run_script(
            SET_SCRIPT, [self.prefix + sid], ["level", level]
        )
        return bool(done)

    async def subscribe(
        self, sid: str, uri: str, wanted: bool, limits: Limits
    ) -> bool | None:
        keys = self._keys(sid)[1:]
        args: list[str | int] = [
            uri,
            MAX_SUBSCRIPTIONS,
            _ms(limits.session_idle),
            "1" if wanted else "0",
        ]
        changed = _int(await self.store.run_script(SUBSCRIBE_SCRIPT, keys, args))
        if changed == -1:
            raise TooManySubscriptions(uri)
        return None if changed == -2 else changed > 0

    async def close(self, sid: str) -> bool:
        closed = await self.store.run_script(CLOSE_SCRIPT, self._keys(sid), [sid])
        return bool(closed)

    async def claim_stream(
        self, sid: str, token: str, stale: str | None = None
    ) -> bool | None:
        alive = f"{self.store.prefix}:alive:"
        args: list[str | int] = [token, alive, stale or ""]
        claimed = _int(
            await self.store.run_script(CLAIM_SCRIPT, [self.prefix + sid], args)
        )
        return None if claimed < 0 else claimed == 1

    async def release_stream(self, sid: str, token: str) -> None:
        await self.store.run_script(RELEASE_SCRIPT, [self.prefix + sid], [token])


def _int(value: object) -> int:
    """A script's integer reply."""
    if not isinstance(value, int | bytes | str):
        raise TypeError(f"a Redis script answered {value!r}, not an integer")
    return int(value)


def _ms(seconds: float) -> int:
    return max(1, round(seconds * 1000))


def _text(value: object) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def _record(fields: dict[str, str], uris: frozenset[str]) -> Record | None:
    """A ``Record`` from a session hash's fields; None if they are not one."""
    try:
        capabilities = json.loads(fields["capabilities"])
        client_info = json.loads(fields["client_info"])
        revision, owner = fields["revision"], fields["owner"]
    except (KeyError, ValueError):
        return None
    if not isinstance(capabilities, dict) or not isinstance(client_info, dict):
        return None
    caps: JsonObject = capabilities
    info: JsonObject = client_info
    session = Session(revision, caps, info, fields.get("level") or None, uris)
    return Record(session, owner, fields.get("stream") or None)


#: A table of sessions: the two keep one interface.
Sessions = MemorySessions | RedisSessions

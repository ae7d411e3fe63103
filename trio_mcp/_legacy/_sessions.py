"""Handshake-era Streamable HTTP sessions: where each ``Mcp-Session-Id`` is kept.

A session is what ``initialize`` settled (a ``Session`` value), whose principal
opened it (``owner``, a digest: another principal's use of the id finds nothing)
and which ``GET`` stream is open for it (``stream``, a token naming the process that
holds it). Two tables keep them, with one interface:

- ``MemorySessions`` (the default store): this process's memory, in least-recently
  used order, so expiry and eviction look at the front only;
- ``RedisSessions`` (``store=RedisStore(url)``): in Redis, so any replica or worker
  serves any request of a session. Each operation is one Lua script, atomic on the
  server with the server's clock. Layout, under the store's prefix:
  ``session:<id>`` a hash (owner, revision, capabilities, client info, log level,
  stream token) and ``session:<id>:subs`` a set of subscribed URIs, both expiring
  ``session_idle`` after the last use; ``sessions`` a sorted set of ids by last use
  (scored by the counter ``sessions:clock``), the index that bounds the count
  (``max_sessions``: a new session beyond it drops the least recently used one, keys
  and all; an expired session is the least recently used, so its stale id goes
  first).

Invariants: a lookup of an unknown, expired, closed or foreign id returns None (the
transport answers 404); only a lookup by the owner refreshes a session; nothing
holds more than ``max_sessions`` sessions (nor one session more than
``MAX_SUBSCRIPTIONS`` URIs).
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


@attrs.frozen
class Record:
    """One session as a table holds it."""

    session: Session
    owner: str
    stream: str | None = None
    """The token of the open ``GET`` stream (``<origin>/<nonce>``), if any."""


class Sessions:
    """A table of sessions (the interface; ``MemorySessions``, ``RedisSessions``)."""

    async def open(self, session: Session, owner: str, limits: Limits) -> str:
        """Keep a new session; return its id."""
        raise NotImplementedError

    async def find(self, sid: str, owner: str, limits: Limits) -> Record | None:
        """The session ``sid`` of ``owner``, refreshed; None if there is none."""
        raise NotImplementedError

    async def set_level(self, sid: str, level: str) -> bool:
        """Set the session's log level; False if it is gone."""
        raise NotImplementedError

    async def subscribe(
        self, sid: str, uri: str, wanted: bool, limits: Limits
    ) -> bool | None:
        """Add (``wanted``) or remove ``uri``; whether the set changed, None if gone.

        Raises:
            TooManySubscriptions: if adding it would pass ``MAX_SUBSCRIPTIONS``.
        """
        raise NotImplementedError

    async def close(self, sid: str) -> bool:
        """End the session; whether it existed."""
        raise NotImplementedError

    async def claim_stream(
        self, sid: str, token: str, stale: str | None = None
    ) -> bool | None:
        """Mark ``token``'s stream as the session's one ``GET`` stream.

        False if another live stream holds it (not ``stale``, a token known to be
        one no more), None if the session is gone.
        """
        raise NotImplementedError

    async def release_stream(self, sid: str, token: str) -> None:
        """The stream ``token`` ended: the session has no ``GET`` stream now."""
        raise NotImplementedError


@attrs.define(eq=False)
class _Entry:
    record: Record
    used: float


class MemorySessions(Sessions):
    """Sessions in this process's memory, least recently used first."""

    def __init__(self) -> None:
        self._entries: OrderedDict[str, _Entry] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    async def open(self, session: Session, owner: str, limits: Limits) -> str:
        await trio.lowlevel.checkpoint()
        now = trio.current_time()
        self._expire(now, limits.session_idle)
        while len(self._entries) >= limits.max_sessions:
            self._entries.popitem(last=False)
        sid = new_session_id()
        self._entries[sid] = _Entry(Record(session, owner), now)
        return sid

    def _expire(self, now: float, idle: float) -> None:
        while self._entries:
            oldest = next(iter(self._entries.values()))
            if oldest.used + idle > now:
                return
            self._entries.popitem(last=False)

    async def find(self, sid: str, owner: str, limits: Limits) -> Record | None:
        await trio.lowlevel.checkpoint()
        entry = self._entries.get(sid)
        if entry is None or entry.record.owner != owner:
            return None
        now = trio.current_time()
        if entry.used + limits.session_idle <= now:
            del self._entries[sid]
            return None
        entry.used = now
        self._entries.move_to_end(sid)
        return entry.record

    def _change(self, sid: str, **changes: object) -> bool:
        entry = self._entries.get(sid)
        if entry is None:
            return False
        entry.record = attrs.evolve(entry.record, **changes)  # type: ignore[arg-type]
        return True

    async def set_level(self, sid: str, level: str) -> bool:
        await trio.lowlevel.checkpoint()
        entry = self._entries.get(sid)
        if entry is None:
            return False
        session = attrs.evolve(entry.record.session, log_level=level)
        return self._change(sid, session=session)

    async def subscribe(
        self, sid: str, uri: str, wanted: bool, limits: Limits
    ) -> bool | None:
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
        await trio.lowlevel.checkpoint()
        return self._entries.pop(sid, None) is not None

    async def claim_stream(
        self, sid: str, token: str, stale: str | None = None
    ) -> bool | None:
        await trio.lowlevel.checkpoint()
        entry = self._entries.get(sid)
        if entry is None:
            return None
        if entry.record.stream not in (None, stale):
            return False
        return self._change(sid, stream=token)

    async def release_stream(self, sid: str, token: str) -> None:
        await trio.lowlevel.checkpoint()
        entry = self._entries.get(sid)
        if entry is not None and entry.record.stream == token:
            self._change(sid, stream=None)


# -- Redis ------------------------------------------------------------------------------
#: KEYS index, hash, clock; ARGV id, idle ms, max sessions, key prefix of sessions,
#: then the hash's field/value pairs. Drops the least recently used sessions beyond
#: the bound (an expired one is the least recently used of all, so it goes first),
#: then keeps the new session; returns how many were dropped. The index's scores
#: come from a counter (``clock``): uses within one millisecond keep their order.
OPEN_SCRIPT: Final = """
local dropped = 0
while redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) do
  local oldest = redis.call('ZPOPMIN', KEYS[1])
  redis.call('DEL', ARGV[4] .. oldest[1], ARGV[4] .. oldest[1] .. ':subs')
  dropped = dropped + 1
end
redis.call('HSET', KEYS[2], unpack(ARGV, 5))
redis.call('PEXPIRE', KEYS[2], ARGV[2])
redis.call('ZADD', KEYS[1], redis.call('INCR', KEYS[3]), ARGV[1])
return dropped
"""

#: KEYS index, hash, subs, clock; ARGV id, idle ms, owner. The session's fields and
#: URIs, refreshed; false when it is unknown (its index entry goes) or not the owner's.
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
redis.call('ZADD', KEYS[1], 'XX', redis.call('INCR', KEYS[4]), ARGV[1])
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


class RedisSessions(Sessions):
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

    async def open(self, session: Session, owner: str, limits: Limits) -> str:
        sid = new_session_id()
        fields: list[str | int] = [
            "owner",
            owner,
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
        await self.store.run_script(
            OPEN_SCRIPT,
            [self.index, self.prefix + sid, self.clock],
            [sid, _ms(limits.session_idle), limits.max_sessions, self.prefix, *fields],
        )
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

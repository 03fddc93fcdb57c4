"""An event log in Redis Streams, so any worker process can serve any turn's events.

Entries have ids 0-<seq>. Appends run as a Lua script that first compares the writer's
lease with the turn's lease key: after a takeover raised the key, a stale writer (a worker
that hung and woke up) can append nothing, and the new holder continues the numbering.

Appends never wait for Redis: a writer task sends what the turns appended every few
milliseconds in one pipeline, and through an outage keeps it queued and retries with
backoff. Readers in this process see a turn's frames only once Redis holds them
(engine/events/acked.py), so a takeover elsewhere never contradicts what a client saw.
"""

from __future__ import annotations

import asyncio
import logging
import random
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from config import Timings
from engine.errors import LeaseLost
from engine.events.acked import AckedFrames, HeldFrames
from engine.events.log import Chunk
from engine.events.redis_follow import END, FIELD, RedisFollower
from streaming.protocol import encode_event

log = logging.getLogger(__name__)
Entry = tuple[str, int, int, bytes, bytes]  # turn, lease, seq, field, value
LOG_ERRORS = (RedisError, OSError)

# Every turn of a batch in one call (a call per turn cost more CPU than the events did).
# KEYS: per turn, its stream and its lease key. ARGV: ttl, then per turn its lease and its
# entry count n, then n (seq, field, value) triples. Returns per turn the entries added, or
# -1 when a newer lease holds the turn (nothing of it is added).
_APPEND = """
local ttl, a, out = ARGV[1], 2, {}
for t = 1, #KEYS, 2 do
  local lease, n = tonumber(ARGV[a]), tonumber(ARGV[a + 1])
  a = a + 2
  local cur = redis.call('GET', KEYS[t + 1])
  if cur and tonumber(cur) > lease then
    out[#out + 1] = -1
  else
    if not cur then redis.call('SET', KEYS[t + 1], lease) end
    local added = 0
    for i = a, a + 3 * n - 1, 3 do
      local ok = redis.pcall('XADD', KEYS[t], '0-' .. ARGV[i], ARGV[i + 1], ARGV[i + 2])
      if type(ok) ~= 'table' or not ok.err then added = added + 1 end
    end
    redis.call('EXPIRE', KEYS[t], ttl)
    redis.call('EXPIRE', KEYS[t + 1], ttl)
    out[#out + 1] = added
  end
  a = a + 3 * n
end
return out
"""
# KEYS: lease key. ARGV: new lease, ttl. Fails (-1) if an equal or newer lease holds it.
_TAKEOVER = """
local cur = redis.call('GET', KEYS[1])
if cur and tonumber(cur) >= tonumber(ARGV[1]) then return -1 end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return 1
"""


def _key(turn_id: str) -> str:
    return f"chat:turn:{turn_id}:events"


def _lease_key(turn_id: str) -> str:
    return f"chat:turn:{turn_id}:lease"


class RedisEventLog:
    """Frames are encoded once, batched by a writer task, and appended under a lease."""

    def __init__(self, url: str, timings: Timings) -> None:
        self.timings = timings
        self._redis = aioredis.Redis.from_url(
            url,
            socket_connect_timeout=timings.log_connect,
            socket_timeout=timings.log_connect + timings.log_block,
        )
        self._follower = RedisFollower(self._redis, timings)
        self._append_script = self._redis.register_script(_APPEND)
        self._takeover_script = self._redis.register_script(_TAKEOVER)
        self._ttl = max(1, round(timings.log_expire))
        self._seq: dict[str, int] = {}
        self._lease: dict[str, int] = {}
        self._frames: dict[str, HeldFrames] = {}
        self._fenced: set[tuple[str, int]] = set()
        self._acked = AckedFrames()
        self._pending: list[Entry] = []
        self._wake = asyncio.Event()
        self._writer: asyncio.Task[None] | None = None
        self._failing = False  # the last write failed: Redis is out
        self._rng = random.Random()

    def open(self, turn_id: str, lease: int = 1) -> None:
        """Start the turn's sequence under `lease`."""
        self._seq[turn_id], self._lease[turn_id] = 0, lease
        self._frames[turn_id] = self._acked.hold(turn_id, [], 0)

    def append(self, turn_id: str, event_type: str, data: dict[str, Any], lease: int = 1) -> int:
        """Encode the event and queue it for the writer task."""
        if self._lease.get(turn_id) != lease or (turn_id, lease) in self._fenced:
            raise LeaseLost(turn_id)
        seq = self._seq[turn_id] + 1
        self._seq[turn_id] = seq
        frame = encode_event(seq, event_type, data)
        self._frames[turn_id].add(frame)
        self._queue((turn_id, lease, seq, FIELD, frame))
        return seq

    def snapshot(self, turn_id: str, lease: int) -> bytes:
        """Return every frame this holder appended (or took over) so far."""
        if self._lease.get(turn_id) != lease:
            raise LeaseLost(turn_id)
        return self._frames[turn_id].whole()

    def finish(self, turn_id: str, lease: int = 1, archived: bool = False) -> None:
        """Queue an end marker after the turn's frames.

        Through an outage an archived turn's queued frames are dropped: readers find the
        gap before the marker and read the database's archive instead.
        """
        if self._lease.get(turn_id) != lease:
            raise LeaseLost(turn_id)
        last = self._seq.pop(turn_id)
        del self._frames[turn_id]
        if archived and self._failing:
            self._pending = [e for e in self._pending if e[0] != turn_id]
        self._queue((turn_id, lease, last + 1, END, str(last).encode()))

    def forget(self, turn_id: str) -> None:
        """Nothing is kept here for a late end: Redis expires the stream."""

    async def read(self, turn_id: str, after: int, timeout: float) -> Chunk | None:
        """Frames after `after`, waiting up to `timeout` for some; None if Redis cannot say."""
        chunk = await self._acked.read(turn_id, after, timeout)
        if chunk is not None:
            return chunk
        return await self._follower.read(_key(turn_id), after, timeout)

    async def takeover(self, turn_id: str, lease: int) -> bytes:
        """Raise the lease key (fencing older writers), then continue after their frames."""
        fenced = await self._takeover_script(keys=[_lease_key(turn_id)], args=[lease, self._ttl])
        if fenced < 0:
            raise LeaseLost(turn_id)
        entries = await self._redis.xrange(_key(turn_id))
        frames = [fields[FIELD] for _, fields in entries if FIELD in fields]
        self._seq[turn_id], self._lease[turn_id] = len(frames), lease
        self._frames[turn_id] = self._acked.hold(turn_id, frames, len(frames))
        return b"".join(frames)

    async def release(self, turn_id: str, lease: int) -> None:
        """Write the turn's queued frames now, then forget it here (if `lease` holds it)."""
        if self._lease.get(turn_id) != lease:
            return
        try:
            await self._flush()
        except LOG_ERRORS:
            # Readers here never saw the unwritten frames: the next holder goes on from
            # what Redis has, and clients with it.
            log.warning("events of handed-over turn %s not written to Redis", turn_id)
        for state in (self._seq, self._lease, self._frames):
            state.pop(turn_id, None)
        self._acked.drop(turn_id)

    async def close(self) -> None:
        """Write what is queued (one try), stop the writer and the follower, disconnect."""
        try:
            await self._flush()
        except LOG_ERRORS:
            log.warning("%d events still queued for Redis were dropped", len(self._pending))
        if self._writer is not None:
            self._writer.cancel()
        await self._follower.close()
        await self._redis.aclose()

    def _queue(self, entry: Entry) -> None:
        self._pending.append(entry)
        if self._writer is None or self._writer.done():
            self._writer = asyncio.get_running_loop().create_task(self._write_loop())
        self._wake.set()

    async def _write_loop(self) -> None:
        t = self.timings
        delay = t.log_backoff_base
        while True:
            await self._wake.wait()
            self._wake.clear()
            # Let a few milliseconds of appends (every running turn's) share one round trip.
            await asyncio.sleep(t.log_coalesce)
            while self._pending:
                try:
                    await self._flush()
                except LOG_ERRORS as err:
                    if not self._failing:
                        log.warning("Redis is unreachable (%s); events stay queued", err)
                    self._failing = True
                    await asyncio.sleep(delay * self._rng.uniform(0.5, 1.0))
                    delay = min(t.log_backoff_cap, delay * 2)
                else:
                    if self._failing:
                        log.warning("Redis is back; queued events written")
                    self._failing, delay = False, t.log_backoff_base

    async def _flush(self) -> None:
        batch, self._pending = self._pending, []
        if not batch:
            return
        by_turn: dict[tuple[str, int], list[Entry]] = {}
        for entry in batch:
            by_turn.setdefault((entry[0], entry[1]), []).append(entry)
        turns = list(by_turn)
        keys: list[str] = []
        args: list[Any] = [self._ttl]
        for turn_id, lease in turns:
            entries = by_turn[turn_id, lease]
            keys += (_key(turn_id), _lease_key(turn_id))
            args += (lease, len(entries))
            for _, _, seq, field, value in entries:
                args += (seq, field, value)
        try:
            results = await self._append_script(keys=keys, args=args)
        except BaseException:
            self._pending[:0] = batch
            raise
        self._settle(by_turn, turns, results)

    def _settle(
        self, by_turn: dict[tuple[str, int], list[Entry]], turns: list[Any], results: list[Any]
    ) -> None:
        progress: dict[str, int] = {}
        ended: set[str] = set()
        lost: set[str] = set()
        for key, result in zip(turns, results, strict=True):
            if result == -1:
                log.warning("turn %s was taken over elsewhere; its events stop here", key[0])
                self._fenced.add(key)
                lost.add(key[0])
                continue
            stored = next((e[2] for e in reversed(by_turn[key]) if e[3] == FIELD), None)
            if stored is not None:
                progress[key[0]] = stored
            if by_turn[key][-1][3] == END:
                ended.add(key[0])
                if key[0] not in self._seq:
                    self._lease.pop(key[0], None)
        self._acked.acked(progress, ended, lost)

"""An event log in Redis Streams, so any worker process can serve any turn's events.

Entries have ids 0-<seq>. Appends run as a Lua script that first compares the writer's
lease with the turn's lease key: after a takeover raised the key, a stale writer (a worker
that hung and woke up) can append nothing, and the new holder continues the numbering.

The turn's epoch key says which generation of the log the stream holds. A Redis that lost
its data (restarted without persistence) has no epoch key: an append that does not start
the epoch is then refused, never added after a gap. The holder writes its whole log again
under the same ids, so readers go on exactly where they were; a worker taking the turn
over finds no log of its epoch and starts the next one (engine/events/log.py).

Appends never wait for Redis: a writer task sends what the turns appended every few
milliseconds in one pipeline, and through an outage keeps it queued and retries with
backoff. Batches go one at a time, in order (a hand-over's last one too): one sent beside
another could reach Redis first and put later ids ahead of earlier ones, which Redis then
refuses as below the stream's top, leaving a hole. Readers in this process see a turn's
frames only once Redis holds them (engine/events/acked.py), so a takeover elsewhere never
contradicts what a client saw; a takeover that finds a hole all the same starts the next
epoch rather than number frames across it.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Mapping
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from config import Timings
from domain.backoff import Backoff
from domain.errors import LeaseLost
from engine.events.acked import AckedFrames, HeldFrames
from engine.events.log import Chunk, Confirm, origin, split_frames
from engine.events.redis_follow import END, FIELD, RedisFollower, entries_of
from streaming.wire.protocol import encode_event

log = logging.getLogger(__name__)
Entry = tuple[str, int, int, int, bytes, bytes]  # turn, lease, epoch, seq, field, value
LOG_ERRORS = (RedisError, OSError)

# Every turn of a batch in one call (a call per turn cost more CPU than the events did).
# KEYS: per turn, its stream, its lease key and its epoch key. ARGV: ttl, then per turn its
# lease, its epoch, the epoch's first seq and its entry count n, then n (seq, field, value)
# triples. Returns per turn the entries added; -1 when a newer lease or epoch holds the
# turn, -2 when the epoch's log is gone and the batch does not start it (nothing is added).
_APPEND = """
local ttl, a, out = ARGV[1], 2, {}
for t = 1, #KEYS, 3 do
  local lease, epoch = tonumber(ARGV[a]), ARGV[a + 1]
  local first, n = tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3])
  a = a + 4
  local cur = redis.call('GET', KEYS[t + 1])
  local ep = redis.call('GET', KEYS[t + 2])
  if (cur and tonumber(cur) > lease) or (ep and ep ~= epoch) then
    out[#out + 1] = -1
  elseif not ep and tonumber(ARGV[a]) ~= first then
    out[#out + 1] = -2
  else
    if not cur then redis.call('SET', KEYS[t + 1], lease) end
    if not ep then redis.call('SET', KEYS[t + 2], epoch) end
    local added = 0
    for i = a, a + 3 * n - 1, 3 do
      local ok = redis.pcall('XADD', KEYS[t], '0-' .. ARGV[i], ARGV[i + 1], ARGV[i + 2])
      if type(ok) ~= 'table' or not ok.err then added = added + 1 end
    end
    for k = t, t + 2 do redis.call('EXPIRE', KEYS[k], ttl) end
    out[#out + 1] = added
  end
  a = a + 3 * n
end
return out
"""
# KEYS: lease key, epoch key. ARGV: new lease, ttl. Fails (-1) if an equal or newer lease
# holds it; else returns the epoch the stream holds ('' if none).
_TAKEOVER = """
local cur = redis.call('GET', KEYS[1])
if cur and tonumber(cur) >= tonumber(ARGV[1]) then return -1 end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return redis.call('GET', KEYS[2]) or ''
"""
# KEYS: stream, lease key, epoch key. ARGV: lease, epoch, ttl. Drops the stream and starts
# the epoch; fails (-1) if a newer lease holds the turn.
_RESTART = """
local cur = redis.call('GET', KEYS[2])
if cur and tonumber(cur) > tonumber(ARGV[1]) then return -1 end
redis.call('DEL', KEYS[1])
redis.call('SET', KEYS[2], ARGV[1], 'EX', ARGV[3])
redis.call('SET', KEYS[3], ARGV[2], 'EX', ARGV[3])
return 1
"""
LOST = -2


def _key(turn_id: str) -> str:
    return f"chat:turn:{turn_id}:events"


def _lease_key(turn_id: str) -> str:
    return f"chat:turn:{turn_id}:lease"


def _epoch_key(turn_id: str) -> str:
    return f"chat:turn:{turn_id}:epoch"


class RedisEventLog:
    """Frames are encoded once, batched by a writer task, and appended under a lease."""

    def __init__(self, url: str, timings: Timings, confirm: Confirm | None = None) -> None:
        self.timings = timings
        # A holder fenced in the database but not in Redis (whose lease key was lost with the
        # rest) must not write its stale log again over the new holder's.
        self._confirm = confirm
        self._rewriting: set[str] = set()
        self._redis = aioredis.Redis.from_url(
            url,
            socket_connect_timeout=timings.log_connect,
            socket_timeout=timings.log_connect + timings.log_block,
        )
        self._follower = RedisFollower(self._redis, timings)
        self._append_script = self._redis.register_script(_APPEND)
        self._takeover_script = self._redis.register_script(_TAKEOVER)
        self._restart_script = self._redis.register_script(_RESTART)
        self._ttl = max(1, round(timings.log_expire))
        self._seq: dict[str, int] = {}
        self._lease: dict[str, int] = {}
        self._epoch: dict[str, int] = {}
        self._frames: dict[str, HeldFrames] = {}
        self._fenced: set[tuple[str, int]] = set()
        self._acked = AckedFrames()
        self._pending: list[Entry] = []
        self._flushing = asyncio.Lock()  # one batch under way at a time
        self._wake = asyncio.Event()
        self._writer: asyncio.Task[None] | None = None
        self._failing = False  # the last write failed: Redis is out
        self._rng = random.Random()

    def open(self, turn_id: str, lease: int = 1) -> None:
        """Start the turn's sequence under `lease`."""
        self._hold(turn_id, lease, 0, [])

    def append(self, turn_id: str, event_type: str, data: Mapping[str, Any], lease: int = 1) -> int:
        """Encode the event and queue it for the writer task."""
        if self._lease.get(turn_id) != lease or (turn_id, lease) in self._fenced:
            raise LeaseLost(turn_id)
        seq = self._seq[turn_id] + 1
        self._seq[turn_id] = seq
        frame = encode_event(seq, event_type, data)
        self._frames[turn_id].add(frame)
        self._queue((turn_id, lease, self._epoch[turn_id], seq, FIELD, frame))
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
        last, epoch = self._seq.pop(turn_id), self._epoch.pop(turn_id)
        del self._frames[turn_id]
        if archived and self._failing:
            self._pending = [e for e in self._pending if e[0] != turn_id]
        self._queue((turn_id, lease, epoch, last + 1, END, str(last).encode()))

    def forget(self, turn_id: str) -> None:
        """Nothing is kept here for a late end: Redis expires the stream."""

    async def read(self, turn_id: str, after: int, timeout: float) -> Chunk | None:
        """Frames after `after`, waiting up to `timeout` for some; None if Redis cannot say."""
        chunk = await self._acked.read(turn_id, after, timeout)
        if chunk is not None:
            return chunk
        return await self._follower.read(_key(turn_id), after, timeout)

    async def takeover(self, turn_id: str, lease: int, epoch: int) -> bytes:
        """Raise the lease key (fencing older writers), then continue after their frames.

        b"" when the stream holds no log of `epoch` (Redis lost it), or a log with a hole
        (clients may have seen frames after it: numbering on from the hole would contradict
        them): the caller restarts.
        """
        keys = [_lease_key(turn_id), _epoch_key(turn_id)]
        found = await self._takeover_script(keys=keys, args=[lease, self._ttl])
        if found == -1:
            raise LeaseLost(turn_id)
        if found != str(epoch).encode():
            return b""
        entries = entries_of(await self._redis.xrange(_key(turn_id)))
        frames: list[bytes] = []
        for entry_id, fields in entries:
            if FIELD not in fields:
                continue  # the end marker
            expected = origin(epoch) + len(frames) + 1
            if int(entry_id.split(b"-")[1]) != expected:
                log.warning(
                    "turn %s: its event log has no frame %d; restarting it", turn_id, expected
                )
                return b""
            frames.append(fields[FIELD])
        if not frames:
            return b""
        self._hold(turn_id, lease, epoch, frames)
        return b"".join(frames)

    async def restart(self, turn_id: str, lease: int, epoch: int) -> None:
        """Drop the turn's stream and go on in `epoch`, numbered after its origin."""
        keys = [_key(turn_id), _lease_key(turn_id), _epoch_key(turn_id)]
        if await self._restart_script(keys=keys, args=[lease, epoch, self._ttl]) == -1:
            raise LeaseLost(turn_id)
        self._hold(turn_id, lease, epoch, [])

    def _hold(self, turn_id: str, lease: int, epoch: int, frames: list[bytes]) -> None:
        """Append to the turn from here on, after `frames` (stored) of `epoch`."""
        start = origin(epoch)
        self._seq[turn_id], self._lease[turn_id] = start + len(frames), lease
        self._epoch[turn_id] = epoch
        self._frames[turn_id] = self._acked.hold(turn_id, frames, start + len(frames), start)

    async def release(self, turn_id: str, lease: int) -> None:
        """Write the turn's queued frames now, after the batch under way, then forget it here
        (if `lease` holds it)."""
        if self._lease.get(turn_id) != lease:
            return
        try:
            await self._flush()
        except LOG_ERRORS:
            # Readers here never saw the unwritten frames: the next holder goes on from
            # what Redis has, and clients with it.
            log.warning("events of handed-over turn %s not written to Redis", turn_id)
        for state in (self._seq, self._lease, self._epoch, self._frames):
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
        backoff = Backoff(t.log_backoff_base, t.log_backoff_cap, self._rng)
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
                    await asyncio.sleep(backoff.next())
                else:
                    if self._failing:
                        log.warning("Redis is back; queued events written")
                    self._failing = False
                    backoff.reset()

    async def _flush(self) -> None:
        # One batch at a time: a failed one goes back before what was queued behind it, and
        # a hand-over's last batch waits for the writer's, so Redis gets every turn in order.
        async with self._flushing:
            await self._flush_batch()

    async def _flush_batch(self) -> None:
        batch, self._pending = self._pending, []
        if not batch:
            return
        by_turn: dict[tuple[str, int, int], list[Entry]] = {}
        for entry in batch:
            by_turn.setdefault(entry[:3], []).append(entry)
        turns = list(by_turn)
        keys: list[str] = []
        args: list[Any] = [self._ttl]
        for turn_id, lease, epoch in turns:
            entries = by_turn[turn_id, lease, epoch]
            keys += (_key(turn_id), _lease_key(turn_id), _epoch_key(turn_id))
            args += (lease, epoch, origin(epoch) + 1, len(entries))
            for *_, seq, field, value in entries:
                args += (seq, field, value)
        try:
            results = await self._append_script(keys=keys, args=args)
        except BaseException:
            self._pending[:0] = batch
            raise
        self._settle(by_turn, turns, results)

    def _settle(
        self,
        by_turn: dict[tuple[str, int, int], list[Entry]],
        turns: list[tuple[str, int, int]],
        results: list[Any],
    ) -> None:
        progress: dict[str, int] = {}
        ended: set[str] = set()
        lost: set[str] = set()
        for key, result in zip(turns, results, strict=True):
            turn_id, lease, epoch = key
            if result == LOST:
                if not self._held_as(turn_id, lease, epoch):
                    log.warning("turn %s: Redis lost its events; its archive has them", turn_id)
                    lost.add(turn_id)  # readers here go to Redis, then the archive
                elif turn_id not in self._rewriting:
                    self._rewriting.add(turn_id)
                    asyncio.get_running_loop().create_task(self._rewrite(turn_id, lease, epoch))
                continue
            if result == -1:
                log.warning("turn %s was taken over elsewhere; its events stop here", turn_id)
                self._fenced.add((turn_id, lease))
                lost.add(turn_id)
                continue
            stored = next((e[3] for e in reversed(by_turn[key]) if e[4] == FIELD), None)
            if stored is not None:
                progress[turn_id] = stored
            if by_turn[key][-1][4] == END:
                ended.add(turn_id)
                if turn_id not in self._seq:
                    self._lease.pop(turn_id, None)
        self._acked.acked(progress, ended, lost)

    def _held_as(self, turn_id: str, lease: int, epoch: int) -> bool:
        """True while this process appends to the turn under `lease` in `epoch`."""
        held = turn_id in self._frames and self._lease.get(turn_id) == lease
        return held and self._epoch.get(turn_id) == epoch

    async def _rewrite(self, turn_id: str, lease: int, epoch: int) -> None:
        """Redis lost the turn's log: queue every frame held again, under the same ids.

        Appends of the turn meanwhile are refused as lost too; they are in what is written.
        """
        try:
            holds = self._confirm is None or await self._confirm(turn_id, lease)
        except Exception as err:
            holds = False  # the database cannot say: the turn's next append asks again
            log.warning("turn %s: lease not confirmed (%s)", turn_id, err)
        finally:
            self._rewriting.discard(turn_id)
        if not holds or not self._held_as(turn_id, lease, epoch):
            return
        log.warning("turn %s: Redis lost its events; writing them again", turn_id)
        start = origin(epoch)
        frames = split_frames(self._frames[turn_id].whole())
        again = [(turn_id, lease, epoch, start + i, FIELD, f) for i, f in enumerate(frames, 1)]
        self._pending[:0] = again
        self._wake.set()

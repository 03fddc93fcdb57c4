"""An event log in Redis Streams, so any worker process can serve any turn's events.

Entries have ids 0-<seq>. Appends run as a Lua script that first compares the writer's
lease with the turn's lease key: after a takeover raised the key, a stale writer (a worker
that hung and woke up) can append nothing, and the new holder continues the numbering.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from typing import Any

import redis

from engine.errors import LeaseLost
from engine.events.acked import AckedFrames, HeldFrames
from engine.events.log import Chunk
from engine.events.redis_follow import END, FIELD, RedisFollower, chunk_of
from streaming.protocol import encode_event

_FIELD, _END = FIELD, END
MAX_BLOCK = 30.0
COALESCE_SECONDS = 0.005
log = logging.getLogger(__name__)

# KEYS: stream, lease key. ARGV: lease, ttl, then (seq, field, value) triples.
_APPEND = """
local cur = redis.call('GET', KEYS[2])
if cur and tonumber(cur) > tonumber(ARGV[1]) then return -1 end
if not cur then redis.call('SET', KEYS[2], ARGV[1]) end
local n = 0
for i = 3, #ARGV, 3 do
  local ok = redis.pcall('XADD', KEYS[1], '0-' .. ARGV[i], ARGV[i + 1], ARGV[i + 2])
  if type(ok) ~= 'table' or not ok.err then n = n + 1 end
end
redis.call('EXPIRE', KEYS[1], ARGV[2])
redis.call('EXPIRE', KEYS[2], ARGV[2])
return n
"""
# KEYS: lease key. ARGV: new lease, ttl. Fails (-1) if an equal or newer lease holds it.
_TAKEOVER = """
local cur = redis.call('GET', KEYS[1])
if cur and tonumber(cur) >= tonumber(ARGV[1]) then return -1 end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return 1
"""


class RedisEventLog:
    """Frames are encoded once, batched by a writer thread, and appended under a lease."""

    def __init__(self, url: str, retain_seconds: int = 3600) -> None:
        # Blocking XREADs last up to MAX_BLOCK; the socket timeout must outlast them.
        self._url = url
        self._redis = redis.Redis.from_url(url, socket_timeout=MAX_BLOCK + 30)
        self._follower: RedisFollower
        self._append_script = self._redis.register_script(_APPEND)
        self._takeover_script = self._redis.register_script(_TAKEOVER)
        self._retain = retain_seconds
        self._seq: dict[str, int] = {}
        self._lease: dict[str, int] = {}
        self._frames: dict[str, HeldFrames] = {}
        self._fenced: set[tuple[str, int]] = set()
        # Readers here get this process's own turns from memory, as far as Redis stored them.
        self._acked = AckedFrames()
        # (turn, lease, seq, field, value): each entry is written under the lease it had.
        self._pending: list[tuple[str, int, int, bytes, bytes]] = []
        self._cond = threading.Condition()
        self._write_lock = threading.Lock()  # keeps appends of one stream in sequence order
        self._stop = False
        self._writer = threading.Thread(target=self._write_loop, name="eventlog-redis", daemon=True)
        self._writer.start()

    @staticmethod
    def _key(turn_id: str) -> str:
        return f"chat:turn:{turn_id}:events"

    @staticmethod
    def _lease_key(turn_id: str) -> str:
        return f"chat:turn:{turn_id}:lease"

    def open(self, turn_id: str, lease: int = 1) -> None:
        """Start the turn's sequence under `lease`."""
        self._seq[turn_id], self._lease[turn_id] = 0, lease
        self._frames[turn_id] = self._acked.hold(turn_id, [], 0)

    def append(self, turn_id: str, event_type: str, data: dict[str, Any], lease: int = 1) -> int:
        """Encode the event and queue it for the writer thread."""
        if self._lease.get(turn_id) != lease or (turn_id, lease) in self._fenced:
            raise LeaseLost(turn_id)
        seq = self._seq[turn_id] + 1
        self._seq[turn_id] = seq
        frame = encode_event(seq, event_type, data)
        self._frames[turn_id].add(frame)
        with self._cond:
            self._pending.append((turn_id, lease, seq, _FIELD, frame))
            self._cond.notify()
        return seq

    def snapshot(self, turn_id: str, lease: int) -> bytes:
        """Return every frame this holder appended (or took over) so far."""
        if self._lease.get(turn_id) != lease:
            raise LeaseLost(turn_id)
        return self._frames[turn_id].whole()

    def finish(self, turn_id: str, lease: int = 1, archived: bool = False) -> None:
        """Queue an end marker after the turn's frames."""
        if self._lease.get(turn_id) != lease:
            raise LeaseLost(turn_id)
        last = self._seq.pop(turn_id)
        del self._frames[turn_id]
        with self._cond:
            # The marker wakes blocked readers and tells them the last sequence; written by
            # the writer thread so a slow Redis never holds up the turn's archive.
            self._pending.append((turn_id, lease, last + 1, _END, str(last).encode()))
            self._cond.notify()

    def read(self, turn_id: str, after: int, timeout: float) -> Chunk | None:
        """Return frames after `after`, blocking up to `timeout`; None if Redis cannot say."""
        key = self._key(turn_id)
        block = max(1, int(min(timeout, MAX_BLOCK) * 1000))
        reply = self._redis.xread({key: f"0-{after}"}, count=10_000, block=block)
        entries = reply[0][1] if reply else []
        if not entries and not self._redis.exists(key):
            return None
        return chunk_of(entries, after)

    def attach(self, loop: asyncio.AbstractEventLoop, thread_id: int) -> None:
        """Serve `aread` in this loop: one shared XREAD follows every stream read here."""
        self._follower = RedisFollower(self._url)
        self._acked.attach(loop)

    async def aread(self, turn_id: str, after: int, timeout: float) -> Chunk | None:
        """In the event loop: frames after `after`, waiting up to `timeout` for some."""
        chunk = await self._acked.read(turn_id, after, timeout)
        if chunk is not None:
            return chunk
        return await self._follower.read(self._key(turn_id), after, timeout)

    def takeover(self, turn_id: str, lease: int) -> bytes:
        """Raise the lease key (fencing older writers), then continue after their frames."""
        if self._takeover_script(keys=[self._lease_key(turn_id)], args=[lease, self._retain]) < 0:
            raise LeaseLost(turn_id)
        frames: list[bytes] = []
        for _, fields in self._redis.xrange(self._key(turn_id)):
            if _FIELD in fields:
                frames.append(fields[_FIELD])
        self._seq[turn_id], self._lease[turn_id] = len(frames), lease
        self._frames[turn_id] = self._acked.hold(turn_id, frames, len(frames))
        return b"".join(frames)

    def release(self, turn_id: str, lease: int) -> None:
        """Write the turn's queued frames now, then forget it here (if `lease` holds it)."""
        if self._lease.get(turn_id) != lease:
            return
        try:
            self._flush()
        except redis.RedisError:
            log.exception("events of handed-over turn %s may be missing in Redis", turn_id)
        for state in (self._seq, self._lease, self._frames):
            state.pop(turn_id, None)
        self._acked.drop(turn_id)

    def _write_loop(self) -> None:
        while True:
            with self._cond:
                while not self._pending and not self._stop:
                    self._cond.wait()
                if self._stop:
                    return
            # Let a few milliseconds of appends (every running turn's) share one round trip:
            # per event, a script call of its own costs more CPU than everything else.
            time.sleep(COALESCE_SECONDS)
            try:
                self._flush()
            except Exception:
                # Frames stay queued and the turn's DB archive keeps them all anyway.
                log.exception("writing events to Redis failed; retrying")
                time.sleep(0.2)

    def _flush(self) -> None:
        with self._write_lock:
            with self._cond:
                batch, self._pending = self._pending, []
            if not batch:
                return
            by_turn: dict[tuple[str, int], list[tuple[str, int, int, bytes, bytes]]] = {}
            for entry in batch:
                by_turn.setdefault((entry[0], entry[1]), []).append(entry)
            pipe = self._redis.pipeline(transaction=False)
            turns = list(by_turn)
            for turn_id, lease in turns:
                args: list[Any] = [lease, self._retain]
                for _, _, seq, field, value in by_turn[turn_id, lease]:
                    args += [seq, field, value]
                self._append_script(
                    keys=[self._key(turn_id), self._lease_key(turn_id)], args=args, client=pipe
                )
            try:
                results = pipe.execute(raise_on_error=False)
            except redis.RedisError:
                with self._cond:
                    self._pending[:0] = batch
                raise
            failed = []
            progress: dict[str, int] = {}
            ended: set[str] = set()
            lost: set[str] = set()
            for key, result in zip(turns, results, strict=True):
                if isinstance(result, redis.RedisError):
                    failed += by_turn[key]
                    continue
                if result == -1:
                    log.warning("turn %s was taken over elsewhere; its events stop here", key[0])
                    self._fenced.add(key)
                    lost.add(key[0])
                    continue
                stored = next((e[2] for e in reversed(by_turn[key]) if e[3] == _FIELD), None)
                if stored is not None:
                    progress[key[0]] = stored
                if by_turn[key][-1][3] == _END:
                    ended.add(key[0])
                    if key[0] not in self._seq:
                        self._lease.pop(key[0], None)
            self._acked.acked(progress, ended, lost)
            if failed:
                with self._cond:
                    self._pending[:0] = failed
                raise redis.ResponseError(f"{len(failed)} events not written; retrying")

    def close(self) -> None:
        """Stop the writer after writing what is queued."""
        try:
            self._flush()
        except redis.RedisError:
            log.exception("events still queued for Redis were dropped at shutdown")
        with self._cond:
            self._stop = True
            self._cond.notify()
        self._writer.join(5)
        self._redis.close()

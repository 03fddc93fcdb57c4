"""An event log in Redis Streams, so any worker process can serve any turn's events."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import redis

from engine.eventlog import Chunk
from streaming.protocol import encode_event

_FIELD = b"f"
_END = b"end"
MAX_BLOCK = 30.0
log = logging.getLogger(__name__)


class RedisEventLog:
    """Frames are encoded once, batched by a writer thread, and XADDed with id 0-<seq>."""

    def __init__(self, url: str, retain_seconds: int = 3600) -> None:
        # Blocking XREADs last up to MAX_BLOCK; the socket timeout must outlast them.
        self._redis = redis.Redis.from_url(url, socket_timeout=MAX_BLOCK + 30)
        self._retain = retain_seconds
        self._seq: dict[str, int] = {}
        self._frames: dict[str, list[bytes]] = {}
        self._pending: list[tuple[str, int, bytes | None]] = []
        self._cond = threading.Condition()
        self._write_lock = threading.Lock()  # keeps XADDs of one stream in sequence order
        self._stop = False
        self._writer = threading.Thread(target=self._write_loop, name="eventlog-redis", daemon=True)
        self._writer.start()

    @staticmethod
    def _keys(turn_id: str) -> str:
        return f"chat:turn:{turn_id}:events"

    def open(self, turn_id: str) -> None:
        """Start the turn's sequence; only this process appends to it."""
        self._seq[turn_id] = 0
        self._frames[turn_id] = []

    def append(self, turn_id: str, event_type: str, data: dict[str, Any]) -> int:
        """Encode the event and queue it for the writer thread."""
        seq = self._seq[turn_id] + 1
        self._seq[turn_id] = seq
        frame = encode_event(seq, event_type, data)
        self._frames[turn_id].append(frame)
        with self._cond:
            self._pending.append((turn_id, seq, frame))
            self._cond.notify()
        return seq

    def finish(self, turn_id: str) -> bytes:
        """Queue an end marker after the turn's frames and return all of them at once."""
        last = self._seq.pop(turn_id)
        with self._cond:
            # The marker wakes blocked readers and tells them the last sequence; written by
            # the writer thread so a slow Redis never holds up the turn's archive.
            self._pending.append((turn_id, last + 1, None))
            self._cond.notify()
        return b"".join(self._frames.pop(turn_id))

    def read(self, turn_id: str, after: int, timeout: float) -> Chunk | None:
        """Return frames after `after`, blocking up to `timeout`; None if Redis cannot say."""
        key = self._keys(turn_id)
        block = max(1, int(min(timeout, MAX_BLOCK) * 1000))
        reply = self._redis.xread({key: f"0-{after}"}, count=10_000, block=block)
        entries = reply[0][1] if reply else []
        if not entries and not self._redis.exists(key):
            return None
        frames, last = [], after
        for entry_id, fields in entries:
            seq = int(entry_id.split(b"-")[1])
            if _END in fields:
                if int(fields[_END]) != last:
                    return None  # frames missing before the end: the archive has them all
                return Chunk(b"".join(frames), last, True)
            if seq != last + 1:
                return None  # a gap (a lost write): never hand out events out of sequence
            frames.append(fields[_FIELD])
            last = seq
        return Chunk(b"".join(frames), last, False)

    def _write_loop(self) -> None:
        while True:
            with self._cond:
                while not self._pending and not self._stop:
                    self._cond.wait()
                if self._stop:
                    return
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
            pipe = self._redis.pipeline(transaction=False)
            keys = set()
            for turn_id, seq, frame in batch:
                key = self._keys(turn_id)
                keys.add(key)
                fields = {_FIELD: frame} if frame is not None else {_END: seq - 1}
                pipe.xadd(key, fields, id=f"0-{seq}")
            for key in keys:
                # A TTL from the first write, so a worker that dies leaves nothing forever.
                pipe.expire(key, self._retain)
            try:
                results = pipe.execute(raise_on_error=False)
            except redis.RedisError:
                with self._cond:
                    self._pending[:0] = batch
                raise
            failed = [
                entry
                for entry, result in zip(batch, results, strict=False)
                if isinstance(result, redis.ResponseError)
                # Written before a lost reply: the entry is there already, which is success.
                and "equal or smaller" not in str(result)
            ]
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

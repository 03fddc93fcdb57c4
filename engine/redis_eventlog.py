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
log = logging.getLogger(__name__)


class RedisEventLog:
    """Frames are encoded once, batched by a writer thread, and XADDed with id 0-<seq>."""

    def __init__(self, url: str, retain_seconds: int = 3600) -> None:
        self._redis = redis.Redis.from_url(url)
        self._retain = retain_seconds
        self._seq: dict[str, int] = {}
        self._frames: dict[str, list[bytes]] = {}
        self._pending: list[tuple[str, int, bytes]] = []
        self._cond = threading.Condition()
        self._write_lock = threading.Lock()  # keeps XADDs of one stream in sequence order
        self._stop = False
        self._writer = threading.Thread(target=self._write_loop, name="eventlog-redis", daemon=True)
        self._writer.start()

    @staticmethod
    def _keys(turn_id: str) -> tuple[str, str]:
        return f"chat:turn:{turn_id}:events", f"chat:turn:{turn_id}:done"

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
        """Write what is queued, mark the turn done, and return all of its frames."""
        events, done = self._keys(turn_id)
        last = self._seq.pop(turn_id)
        try:
            self._flush()
            pipe = self._redis.pipeline(transaction=False)
            pipe.set(done, last, ex=self._retain)
            pipe.expire(events, self._retain)
            pipe.execute()
        except redis.RedisError:
            log.exception(
                "could not finish turn %s in Redis; its DB archive serves replays", turn_id
            )
        return b"".join(self._frames.pop(turn_id))

    def read(self, turn_id: str, after: int, timeout: float) -> Chunk | None:
        """Return frames after `after`, blocking up to `timeout`; None if Redis has no such turn."""
        events, done = self._keys(turn_id)
        reply = self._redis.xread(
            {events: f"0-{after}"}, count=10_000, block=max(1, int(timeout * 1000))
        )
        entries = reply[0][1] if reply else []
        raw_done = self._redis.get(done)
        done_seq = int(raw_done) if raw_done is not None else None
        if not entries and done_seq is None and not self._redis.exists(events):
            return None
        last = int(entries[-1][0].split(b"-")[1]) if entries else after
        frames = b"".join(fields[_FIELD] for _, fields in entries)
        return Chunk(frames, last, done_seq is not None and last >= done_seq)

    def _write_loop(self) -> None:
        while True:
            with self._cond:
                while not self._pending and not self._stop:
                    self._cond.wait()
                if self._stop:
                    return
            try:
                self._flush()
            except redis.RedisError:
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
            for turn_id, seq, frame in batch:
                pipe.xadd(self._keys(turn_id)[0], {_FIELD: frame}, id=f"0-{seq}")
            try:
                pipe.execute()
            except redis.RedisError:
                with self._cond:
                    self._pending[:0] = batch
                raise

    def close(self) -> None:
        """Stop the writer after writing what is queued."""
        self._flush()
        with self._cond:
            self._stop = True
            self._cond.notify()
        self._writer.join(5)
        self._redis.close()

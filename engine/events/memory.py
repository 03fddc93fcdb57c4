"""The in-process event log: encoded frames per turn, spooled to a local file.

The spool lets a restarted single-process server take over its interrupted turns and
continue their event numbering exactly where clients left off (the OS keeps what was
written even when the process is killed). It also bounds memory: only the last TAIL bytes
of frames stay in memory, enough for live readers; a reader further behind reads the
spool, and once a turn's frames are archived in the database, the database.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from array import array
from itertools import accumulate
from pathlib import Path
from typing import Any

from engine.errors import LeaseLost
from engine.events.log import Chunk, split_frames, wake, wake_all
from engine.events.spool import Spool, kept
from streaming.protocol import encode_event

log = logging.getLogger(__name__)
# Bytes of recent frames kept in memory (between TAIL and twice that) once a spool or the
# archive holds them all: about a second of text events, and live readers are a read beat
# (STREAM_BATCH_SECONDS) behind; a reader further behind reads the spool.
TAIL = 8 * 1024


class _TurnLog:
    __slots__ = (
        "base",
        "cond",
        "ends",
        "finished",
        "finished_at",
        "frames",
        "kept_from",
        "lease",
        "lock",
        "sleepers",
        "spool",
        "waiters",
    )

    def __init__(
        self, lease: int, frames: list[bytes] | None = None, spool: Spool | None = None
    ) -> None:
        self.lease = lease
        # Frames base+1, base+2, ... are in memory; the earlier ones only in the spool.
        self.frames: list[bytes] = frames or []
        self.base = 0
        # With a spool: the spool offset where each frame ends, and where `frames` start.
        self.ends = array("Q", accumulate(map(len, self.frames)) if spool is not None else ())
        self.kept_from = 0
        # The hot path takes the bare lock: Condition's own methods are Python code.
        self.lock = threading.Lock()
        self.cond = threading.Condition(self.lock)
        self.sleepers = 0  # threads waiting in read(): notified only when there are some
        self.finished = False
        self.finished_at = 0.0
        self.spool = spool
        # Readers waiting in the event loop, woken once per burst of appends.
        self.waiters: list[asyncio.Future[None]] = []


class MemoryEventLog:
    """One list of encoded frames and a condition per turn; finished logs stay a minute."""

    def __init__(self, retain_seconds: float = 60.0, spool_dir: str | None = None) -> None:
        self._logs: dict[str, _TurnLog] = {}
        self._lock = threading.Lock()
        self._retain = retain_seconds
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread = 0
        self._spool = Path(spool_dir) if spool_dir else None
        if self._spool is not None:
            self._spool.mkdir(parents=True, exist_ok=True)

    def open(self, turn_id: str, lease: int = 1) -> None:
        """Create the log of a new turn and forget logs finished long ago."""
        turn_log = _TurnLog(lease, spool=self._open_spool(turn_id, truncate=True))
        with self._lock:
            self._evict(time.monotonic())
            self._logs[turn_id] = turn_log

    def append(self, turn_id: str, event_type: str, data: dict[str, Any], lease: int = 1) -> int:
        """Encode once, append (and spool), and wake the readers."""
        turn_log = self._held(turn_id, lease)
        with turn_log.lock:
            if turn_log.lease != lease:
                raise LeaseLost(turn_id)
            seq = turn_log.base + len(turn_log.frames) + 1
            frame = encode_event(seq, event_type, data)
            turn_log.frames.append(frame)
            spool = turn_log.spool
            if spool is not None:
                spool.write(frame)
                turn_log.ends.append(spool.size)
                if spool.size - turn_log.kept_from > 2 * TAIL:
                    _trim(turn_log, spool.size)
            if turn_log.sleepers:
                turn_log.cond.notify_all()
            if turn_log.waiters:
                self._wake(turn_log)
        return seq

    def snapshot(self, turn_id: str, lease: int) -> bytes:
        """Return every frame appended so far."""
        turn_log = self._held(turn_id, lease)
        with turn_log.cond:
            return _whole(turn_log)

    def finish(self, turn_id: str, lease: int = 1, archived: bool = False) -> None:
        """Mark complete, wake readers, drop the spool.

        `archived`: the database holds the frames, so only a tail stays in memory (readers
        further behind are served from the archive). Otherwise all of them stay, for
        whoever takes the turn over to record its end.
        """
        turn_log = self._held(turn_id, lease)
        with turn_log.cond:
            if archived:
                # Where the last frame ends, from what is in memory: no read of the spool.
                _trim(turn_log, turn_log.kept_from + sum(map(len, turn_log.frames)))
            elif turn_log.base:
                turn_log.frames, turn_log.base = split_frames(_whole(turn_log)), 0
            turn_log.ends = array("Q")
            turn_log.finished = True
            turn_log.finished_at = time.monotonic()
            self._close_spool(turn_log, turn_id, remove=True)
            turn_log.cond.notify_all()
            self._wake(turn_log)

    def read(self, turn_id: str, after: int, timeout: float) -> Chunk | None:
        """Return frames after `after` as soon as there are any (or at `timeout`)."""
        turn_log = self._logs.get(turn_id)
        if turn_log is None:
            return None
        with turn_log.cond:
            if _count(turn_log) <= after and not turn_log.finished:
                turn_log.sleepers += 1
                try:
                    turn_log.cond.wait(timeout)
                finally:
                    turn_log.sleepers -= 1
            return self._chunk(turn_log, after)

    def attach(self, loop: asyncio.AbstractEventLoop, thread_id: int) -> None:
        """Serve `aread` in this loop, which runs in thread `thread_id`."""
        self._loop, self._loop_thread = loop, thread_id

    async def aread(self, turn_id: str, after: int, timeout: float) -> Chunk | None:
        """In the event loop: frames after `after`, waiting up to `timeout` for some."""
        turn_log = self._logs.get(turn_id)
        if turn_log is None:
            return None
        with turn_log.lock:
            if _count(turn_log) > after or turn_log.finished:
                return self._chunk(turn_log, after)
            waiter = asyncio.get_running_loop().create_future()
            turn_log.waiters.append(waiter)
        timer = asyncio.get_running_loop().call_later(timeout, wake, waiter)
        try:
            await waiter
        finally:
            timer.cancel()
        with turn_log.lock:
            if waiter in turn_log.waiters:  # timed out: nobody woke it
                turn_log.waiters.remove(waiter)
            return self._chunk(turn_log, after)

    @staticmethod
    def _chunk(turn_log: _TurnLog, after: int) -> Chunk | None:
        """Frames after `after`; None when only the archive still has them."""
        base, frames, count = turn_log.base, turn_log.frames, _count(turn_log)
        if after >= base:
            return Chunk(b"".join(frames[after - base :]), max(count, after), turn_log.finished)
        spool = turn_log.spool
        if spool is None:
            return None
        start = turn_log.ends[after - 1] if after else 0
        return Chunk(spool.read(start, spool.size), count, turn_log.finished)

    def _wake(self, turn_log: _TurnLog) -> None:
        # Under the turn log's lock. Appends made by the loop itself (the model streams run
        # there) wake readers directly: they run once the current burst is processed.
        waiters, turn_log.waiters = turn_log.waiters, []
        if not waiters or self._loop is None:
            return
        if threading.get_ident() == self._loop_thread:
            wake_all(waiters)
        else:
            self._loop.call_soon_threadsafe(wake_all, waiters)

    def takeover(self, turn_id: str, lease: int) -> bytes:
        """Continue a turn: from memory if this process has it, else from its spool file."""
        with self._lock:
            existing = self._logs.get(turn_id)
        if existing is not None:
            with existing.cond:
                if existing.lease >= lease:
                    raise LeaseLost(turn_id)
                existing.lease = lease  # the older holder's appends fail from now on
                return _whole(existing)
        frames: list[bytes] = []
        path = self._path(turn_id)
        if path is not None and path.exists():
            frames = split_frames(kept(path.read_bytes()))
            # Rewrite without a torn last frame, so appends continue on a clean boundary.
            path.write_bytes(b"".join(frames))
        turn_log = _TurnLog(lease, frames, self._open_spool(turn_id, truncate=False))
        with self._lock:
            self._logs[turn_id] = turn_log
        return b"".join(frames)

    def release(self, turn_id: str, lease: int) -> None:
        """Forget a handed-over turn here; its spool stays for whoever takes it over."""
        with self._lock:
            turn_log = self._logs.get(turn_id)
            if turn_log is None or turn_log.lease != lease:
                return
            del self._logs[turn_id]
        if turn_log is not None:
            with turn_log.cond:
                self._close_spool(turn_log, turn_id, remove=False)
                turn_log.cond.notify_all()

    def close(self) -> None:
        """Close every spool file (their contents stay for a restarted server)."""
        with self._lock:
            logs = list(self._logs.items())
        for turn_id, turn_log in logs:
            with turn_log.cond:
                self._close_spool(turn_log, turn_id, remove=False)

    def _held(self, turn_id: str, lease: int) -> _TurnLog:
        turn_log = self._logs.get(turn_id)
        if turn_log is None or turn_log.lease != lease:
            raise LeaseLost(turn_id)
        return turn_log

    def _path(self, turn_id: str) -> Path | None:
        return None if self._spool is None else self._spool / f"{turn_id}.sse"

    def _open_spool(self, turn_id: str, truncate: bool) -> Spool | None:
        path = self._path(turn_id)
        return None if path is None else Spool(path, truncate)

    def _close_spool(self, turn_log: _TurnLog, turn_id: str, remove: bool) -> None:
        if turn_log.spool is None:
            return
        turn_log.spool.close()
        turn_log.spool = None
        path = self._path(turn_id)
        if remove and path is not None:
            try:
                path.unlink()
            except OSError:
                log.warning("could not remove the spool of turn %s", turn_id)

    def _evict(self, now: float) -> None:
        stale = [
            k for k, v in self._logs.items() if v.finished and now - v.finished_at > self._retain
        ]
        for key in stale:
            del self._logs[key]


def _count(turn_log: _TurnLog) -> int:
    """The last sequence number appended."""
    return turn_log.base + len(turn_log.frames)


def _whole(turn_log: _TurnLog) -> bytes:
    """Every frame of the turn (a finished, archived log keeps only its tail)."""
    if turn_log.base and turn_log.spool is not None:
        return turn_log.spool.read(0, turn_log.spool.size)
    return b"".join(turn_log.frames)


def _trim(turn_log: _TurnLog, end: int) -> None:
    """Drop the oldest frames held elsewhere until at most TAIL bytes stay in memory.

    `end` is where the last frame ends (in the spool, or in the whole log without one).
    """
    start = turn_log.kept_from
    frames, drop = turn_log.frames, 0
    while end - start > TAIL and drop < len(frames) - 1:
        start += len(frames[drop])
        drop += 1
    del frames[:drop]
    turn_log.base += drop
    turn_log.kept_from = start

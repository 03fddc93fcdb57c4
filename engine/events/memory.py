"""The in-process event log: encoded frames per turn, spooled to a local file.

The spool lets a restarted single-process server take over its interrupted turns and
continue their event numbering exactly where clients left off (the OS keeps what was
written even when the process is killed). It also bounds memory: only the last TAIL bytes
of frames stay in memory, enough for live readers; a reader further behind reads the
spool, and once a turn's frames are archived in the database, the database. A spool that
cannot be written (a full disk) is left as it is: the turn's later frames stay in memory.

Everything here runs in the engine's loop: no locks.
"""

from __future__ import annotations

import asyncio
import logging
import time
from array import array
from collections.abc import Mapping
from itertools import accumulate
from pathlib import Path
from typing import Any

from domain.errors import LeaseLost
from engine.events.log import (
    Chunk,
    first_seq,
    origin,
    split_frames,
    wait_for_wake,
    wake_all,
)
from engine.events.spool import Spool, kept
from streaming.wire.protocol import encode_event

log = logging.getLogger(__name__)
# Bytes of recent frames kept in memory (between TAIL and twice that) once a spool or the
# archive holds them all: about a second of text events, and live readers are a read beat
# (STREAM_BATCH_SECONDS) behind; a reader further behind reads the spool.
TAIL = 8 * 1024


class _TurnLog:
    __slots__ = (
        "base",
        "ends",
        "finished",
        "finished_at",
        "frames",
        "kept_from",
        "lease",
        "origin",
        "spool",
        "spooled",
        "waiters",
    )

    def __init__(
        self,
        lease: int,
        frames: list[bytes] | None = None,
        spool: Spool | None = None,
        origin: int = 0,
    ) -> None:
        self.lease = lease
        # Frames base+1, base+2, ... are in memory; the earlier ones (from origin+1, the
        # epoch's first) only in the spool.
        self.frames: list[bytes] = frames or []
        self.origin = self.base = origin
        # With a spool: where each spooled frame ends in it, and where `frames` start.
        self.ends = array("Q", accumulate(map(len, self.frames)) if spool is not None else ())
        self.spooled = len(self.ends)  # frames the spool holds (all, unless it failed)
        self.kept_from = 0
        self.finished = False
        self.finished_at = 0.0
        self.spool = spool
        self.waiters: list[asyncio.Future[None]] = []


class MemoryEventLog:
    """One list of encoded frames per turn; finished logs stay in memory `retain` seconds."""

    def __init__(self, spool_dir: str | None, retain: float) -> None:
        self._logs: dict[str, _TurnLog] = {}
        self._retain = retain
        self._spool = Path(spool_dir) if spool_dir else None
        if self._spool is not None:
            self._spool.mkdir(parents=True, exist_ok=True)

    def open(self, turn_id: str, lease: int = 1) -> None:
        """Create the log of a new turn and forget logs finished long ago."""
        self._evict(time.monotonic())
        self._logs[turn_id] = _TurnLog(lease, spool=self._open_spool(turn_id, truncate=True))

    def append(self, turn_id: str, event_type: str, data: Mapping[str, Any], lease: int = 1) -> int:
        """Encode once, append (and spool), and wake the readers."""
        turn_log = self._held(turn_id, lease)
        seq = turn_log.base + len(turn_log.frames) + 1
        frame = encode_event(seq, event_type, data)
        turn_log.frames.append(frame)
        spool = turn_log.spool
        if spool is not None and turn_log.spooled == seq - 1 - turn_log.origin:
            try:
                spool.write(frame)
            except OSError:
                log.exception("turn %s: the spool is full; its next events stay in memory", turn_id)
            else:
                turn_log.ends.append(spool.size)
                turn_log.spooled = seq - turn_log.origin
                if spool.size - turn_log.kept_from > 2 * TAIL:
                    _trim(turn_log, spool.size)
        if turn_log.waiters:
            waiters, turn_log.waiters = turn_log.waiters, []
            wake_all(waiters)
        return seq

    def snapshot(self, turn_id: str, lease: int) -> bytes:
        """Return every frame appended so far."""
        return _whole(self._held(turn_id, lease))

    def finish(self, turn_id: str, lease: int = 1, archived: bool = False) -> None:
        """Mark complete and wake readers.

        `archived`: the database holds the frames, so only a tail stays in memory (readers
        further behind are served from the archive) and the spool goes. Otherwise all of
        them stay, and the spool too, for whoever records the turn's end later.
        """
        turn_log = self._held(turn_id, lease)
        if archived:
            _trim(turn_log, turn_log.kept_from + sum(map(len, turn_log.frames)))
        elif turn_log.base > turn_log.origin:
            turn_log.frames, turn_log.base = split_frames(_whole(turn_log)), turn_log.origin
        turn_log.ends, turn_log.spooled = array("Q"), 0
        turn_log.finished = True
        turn_log.finished_at = time.monotonic()
        self._close_spool(turn_log, turn_id, remove=archived)
        waiters, turn_log.waiters = turn_log.waiters, []
        wake_all(waiters)

    def forget(self, turn_id: str) -> None:
        """The turn's end is recorded at last: its spool is no longer needed."""
        path = self._path(turn_id)
        if path is not None:
            path.unlink(missing_ok=True)

    async def read(self, turn_id: str, after: int, timeout: float) -> Chunk | None:
        """Frames after `after`, waiting up to `timeout` for some; None if unknown here."""
        turn_log = self._logs.get(turn_id)
        if turn_log is None:
            return None
        if _count(turn_log) <= after and not turn_log.finished and timeout > 0:
            await wait_for_wake(turn_log.waiters, timeout)
        return _chunk(turn_log, after)

    async def takeover(self, turn_id: str, lease: int, epoch: int) -> bytes:
        """Continue a turn: from memory if this process has it, else from its spool file.

        b"" if neither holds frames of `epoch` (the caller restarts the log).
        """
        start = origin(epoch)
        existing = self._logs.get(turn_id)
        if existing is not None:
            if existing.lease >= lease:
                raise LeaseLost(turn_id)
            existing.lease = lease  # the older holder's appends fail from now on
            return _whole(existing) if existing.origin == start else b""
        frames: list[bytes] = []
        path = self._path(turn_id)
        if path is not None and path.exists():
            frames = split_frames(kept(path.read_bytes()))
            if frames and first_seq(frames[0]) != start + 1:
                return b""
            # Rewrite without a torn last frame, so appends continue on a clean boundary.
            path.write_bytes(b"".join(frames))
        if not frames:
            return b""
        spool = self._open_spool(turn_id, truncate=False)
        self._logs[turn_id] = _TurnLog(lease, frames, spool, start)
        return b"".join(frames)

    async def restart(self, turn_id: str, lease: int, epoch: int) -> None:
        """Forget the turn's frames (and spool) and number its next ones after `epoch`'s origin."""
        existing = self._logs.get(turn_id)
        if existing is not None:
            if existing.lease > lease:
                raise LeaseLost(turn_id)
            self._close_spool(existing, turn_id, remove=False)
            wake_all(existing.waiters)
        spool = self._open_spool(turn_id, truncate=True)
        self._logs[turn_id] = _TurnLog(lease, spool=spool, origin=origin(epoch))

    async def release(self, turn_id: str, lease: int) -> None:
        """Forget a handed-over turn here; its spool stays for whoever takes it over."""
        turn_log = self._logs.get(turn_id)
        if turn_log is None or turn_log.lease != lease:
            return
        del self._logs[turn_id]
        self._close_spool(turn_log, turn_id, remove=False)
        waiters, turn_log.waiters = turn_log.waiters, []
        wake_all(waiters)

    async def close(self) -> None:
        """Close every spool file (their contents stay for a restarted server)."""
        for turn_id, turn_log in list(self._logs.items()):
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
        if path is None:
            return None
        try:
            return Spool(path, truncate)
        except OSError:
            log.exception("turn %s: no spool file; its events stay in memory only", turn_id)
            return None

    def _close_spool(self, turn_log: _TurnLog, turn_id: str, remove: bool) -> None:
        spool, turn_log.spool = turn_log.spool, None
        try:
            if spool is not None:
                spool.close()
            if remove:
                self.forget(turn_id)
        except OSError:
            log.warning("could not close the spool of turn %s", turn_id)

    def _evict(self, now: float) -> None:
        stale = [
            k for k, v in self._logs.items() if v.finished and now - v.finished_at > self._retain
        ]
        for key in stale:
            del self._logs[key]


def _count(turn_log: _TurnLog) -> int:
    """The last sequence number appended."""
    return turn_log.base + len(turn_log.frames)


def _chunk(turn_log: _TurnLog, after: int) -> Chunk | None:
    """Frames after `after`; None when only the archive still has them."""
    base, frames, count = turn_log.base, turn_log.frames, _count(turn_log)
    start_of = turn_log.origin
    if after >= base or base == start_of:
        held = frames[max(0, after - base) :]
        return Chunk(b"".join(held), max(count, after), turn_log.finished)
    spool = turn_log.spool
    if spool is None:
        return None
    start = turn_log.ends[after - 1 - start_of] if after > start_of else 0
    spooled = turn_log.spooled
    rest = b"".join(frames[start_of + spooled - base :])
    return Chunk(spool.read(start, turn_log.ends[spooled - 1]) + rest, count, turn_log.finished)


def _whole(turn_log: _TurnLog) -> bytes:
    """Every frame of the turn (a finished, archived log keeps only its tail)."""
    if turn_log.base > turn_log.origin and turn_log.spool is not None:
        spooled = turn_log.spooled
        head = turn_log.spool.read(0, turn_log.ends[spooled - 1])
        return head + b"".join(turn_log.frames[turn_log.origin + spooled - turn_log.base :])
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

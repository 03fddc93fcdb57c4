"""A worker's own turns, read back from memory once Redis has acknowledged their frames.

Readers in the process that runs a turn need not ask Redis for frames it just wrote: the
writer task says how far each turn's frames are stored, and readers here get exactly
those frames from memory. Frames not yet stored are never shown, so a takeover elsewhere
(which continues from what Redis holds) can never contradict what a client saw.

Memory stays small however long a turn runs: past the last TAIL bytes, stored frames are
kept zlib-packed (the turn's archive is built from them at its end, with no round trip to
Redis), and a reader that far behind reads Redis instead.
"""

from __future__ import annotations

import asyncio
import zlib

from engine.events.log import Chunk, wait_for_wake, wake_all

# Bytes of recent frames kept as they are (between TAIL and twice that): live readers are
# a read beat behind. Older ones are packed TAIL bytes or more at a time.
TAIL = 8 * 1024


class HeldFrames:
    """One turn's frames held here: the last ones as they are, older ones packed."""

    __slots__ = ("acked", "base", "done", "frames", "gone", "packed", "size", "waiters")

    def __init__(self, frames: list[bytes], acked: int, origin: int = 0) -> None:
        self.frames = list(frames)  # frames base+1, base+2, ...
        self.base = origin  # the epoch's first frame is origin+1 (engine/events/log.py)
        self.size = sum(map(len, frames))  # bytes in `frames`
        self.packed: list[bytes] = []  # frames origin+1..base, in zlib blocks
        self.acked = acked
        self.done = False  # the end marker is stored: no more frames
        self.gone = False  # fenced or handed over: Redis is the only truth now
        self.waiters: list[asyncio.Future[None]] = []

    def add(self, frame: bytes) -> None:
        """Keep a frame just appended (not yet stored)."""
        self.frames.append(frame)
        self.size += len(frame)

    def whole(self) -> bytes:
        """Every frame held, stored or not."""
        return b"".join(map(zlib.decompress, self.packed)) + b"".join(self.frames)

    def pack(self) -> None:
        """Pack the stored frames before the last TAIL bytes, if they make TAIL bytes or more."""
        limit, size, count = min(self.acked - self.base, len(self.frames)), self.size, 0
        while count < limit and size - len(self.frames[count]) >= TAIL:
            size -= len(self.frames[count])
            count += 1
        raw = b"".join(self.frames[:count])
        if len(raw) < TAIL:
            return
        self.packed.append(zlib.compress(raw, 1))
        del self.frames[:count]
        self.base += count
        self.size -= len(raw)


class AckedFrames:
    """Per turn held here: its frames, how many Redis holds, and the readers waiting."""

    def __init__(self) -> None:
        self._turns: dict[str, HeldFrames] = {}

    def hold(self, turn_id: str, frames: list[bytes], acked: int, origin: int = 0) -> HeldFrames:
        """This process appends to the turn from now on, after `frames` (`acked` stored).

        `frames` are numbered from `origin` + 1.
        """
        turn = HeldFrames(frames, acked, origin)
        turn.pack()
        self._turns[turn_id] = turn
        return turn

    def acked(self, progress: dict[str, int], ended: set[str], lost: set[str]) -> None:
        """From the writer task: frames stored up to `progress`; turns ended or lost."""
        woken: list[HeldFrames] = []
        for turn_id, seq in progress.items():
            turn = self._turns.get(turn_id)
            if turn is not None and seq > turn.acked:
                turn.acked = seq
                woken.append(turn)
        for turn_id in ended | lost:
            turn = self._turns.pop(turn_id, None)
            if turn is not None:
                turn.done, turn.gone = turn_id in ended, turn_id in lost
                woken.append(turn)
        for turn in woken:
            waiters, turn.waiters = turn.waiters, []
            wake_all(waiters)
            if turn.size > 2 * TAIL and not (turn.done or turn.gone):
                turn.pack()

    def drop(self, turn_id: str) -> None:
        """The turn is no longer held here (handed over): readers go to Redis."""
        self.acked({}, set(), {turn_id})

    async def read(self, turn_id: str, after: int, timeout: float) -> Chunk | None:
        """Stored frames after `after`, waiting up to `timeout`; None if not here (or packed)."""
        turn = self._turns.get(turn_id)
        if turn is None:
            return None
        if turn.acked <= after and not turn.done and not turn.gone and timeout > 0:
            await wait_for_wake(turn.waiters, timeout)
        if turn.gone or after < turn.base:
            return None
        stored, base = turn.acked, turn.base
        frames = b"".join(turn.frames[after - base : stored - base])
        return Chunk(frames, max(stored, after), turn.done)

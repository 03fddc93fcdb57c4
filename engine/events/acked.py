"""A worker's own turns, read back from memory once Redis has acknowledged their frames.

Readers in the process that runs a turn need not ask Redis for frames it just wrote: the
writer thread says how far each turn's frames are stored, and readers here get exactly
those frames from memory. Frames not yet stored are never shown, so a takeover elsewhere
(which continues from what Redis holds) can never contradict what a client saw.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field

from engine.events.log import Chunk, wake, wake_all


@dataclass(slots=True)
class _Turn:
    frames: list[bytes]
    acked: int = 0
    done: bool = False  # the end marker is stored: no more frames
    gone: bool = False  # fenced or handed over: Redis is the only truth now
    waiters: list[asyncio.Future[None]] = field(default_factory=list)


class AckedFrames:
    """Per turn held here: its frames, how many Redis holds, and the readers waiting."""

    def __init__(self) -> None:
        self._turns: dict[str, _Turn] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()

    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        """Wake readers in this loop."""
        self._loop = loop

    def hold(self, turn_id: str, frames: list[bytes], acked: int) -> None:
        """This process appends to the turn from now on; `frames` is its (shared) list."""
        with self._lock:
            self._turns[turn_id] = _Turn(frames, acked)

    def acked(self, progress: dict[str, int], ended: set[str], lost: set[str]) -> None:
        """From the writer thread: frames stored up to `progress`; turns ended or lost."""
        woken: list[_Turn] = []
        with self._lock:
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
        if woken and self._loop is not None:
            self._loop.call_soon_threadsafe(_wake_turns, woken)

    def drop(self, turn_id: str) -> None:
        """The turn is no longer held here (handed over): readers go to Redis."""
        self.acked({}, set(), {turn_id})

    async def read(self, turn_id: str, after: int, timeout: float) -> Chunk | None:
        """Stored frames after `after`, waiting up to `timeout`; None if not held here."""
        turn = self._turns.get(turn_id)
        if turn is None:
            return None
        if turn.acked <= after and not turn.done and not turn.gone:
            loop = asyncio.get_running_loop()
            waiter = loop.create_future()
            turn.waiters.append(waiter)
            timer = loop.call_later(timeout, wake, waiter)
            try:
                await waiter
            finally:
                timer.cancel()
        if turn.gone:
            return None
        stored = turn.acked
        return Chunk(b"".join(turn.frames[after:stored]), max(stored, after), turn.done)


def _wake_turns(turns: list[_Turn]) -> None:
    for turn in turns:
        waiters, turn.waiters = turn.waiters, []
        wake_all(waiters)

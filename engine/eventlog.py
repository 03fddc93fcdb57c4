"""Per-turn logs of encoded client events that SSE readers replay and follow."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, Protocol

from streaming.protocol import encode_event


@dataclass(frozen=True, slots=True)
class Chunk:
    """Frames after a reader's position: `frames` end at `last_seq`; `finished` means no more."""

    frames: bytes
    last_seq: int
    finished: bool


class EventLog(Protocol):
    """Where a running turn appends events and SSE responses read them."""

    def open(self, turn_id: str) -> None:
        """Create the log of a new turn."""

    def append(self, turn_id: str, event_type: str, data: dict[str, Any]) -> int:
        """Encode and append one event; return its sequence number (1, 2, ...)."""

    def finish(self, turn_id: str) -> bytes:
        """Mark the turn's log complete and return all of its frames."""

    def read(self, turn_id: str, after: int, timeout: float) -> Chunk | None:
        """Return the frames after `after`, waiting up to `timeout` for some; None if unknown."""


class _TurnLog:
    __slots__ = ("cond", "finished", "finished_at", "frames")

    def __init__(self) -> None:
        self.frames: list[bytes] = []
        self.cond = threading.Condition(threading.Lock())
        self.finished = False
        self.finished_at = 0.0


class MemoryEventLog:
    """An in-process event log: one list of encoded frames and a condition per turn."""

    # Finished logs stay a minute for reconnecting readers; the database archive has them after.
    def __init__(self, retain_seconds: float = 60.0) -> None:
        self._logs: dict[str, _TurnLog] = {}
        self._lock = threading.Lock()
        self._retain = retain_seconds

    def open(self, turn_id: str) -> None:
        """Create the log of a new turn and forget logs finished long ago."""
        with self._lock:
            self._evict(time.monotonic())
            self._logs[turn_id] = _TurnLog()

    def append(self, turn_id: str, event_type: str, data: dict[str, Any]) -> int:
        """Encode once, append, and wake the readers."""
        log = self._logs[turn_id]
        with log.cond:
            seq = len(log.frames) + 1
            log.frames.append(encode_event(seq, event_type, data))
            log.cond.notify_all()
        return seq

    def finish(self, turn_id: str) -> bytes:
        """Mark complete, wake readers, return every frame."""
        log = self._logs[turn_id]
        with log.cond:
            log.finished = True
            log.finished_at = time.monotonic()
            log.cond.notify_all()
            return b"".join(log.frames)

    def read(self, turn_id: str, after: int, timeout: float) -> Chunk | None:
        """Return frames after `after` as soon as there are any (or at `timeout`)."""
        log = self._logs.get(turn_id)
        if log is None:
            return None
        with log.cond:
            if len(log.frames) <= after and not log.finished:
                log.cond.wait(timeout)
            frames = log.frames
            return Chunk(b"".join(frames[after:]), max(len(frames), after), log.finished)

    def _evict(self, now: float) -> None:
        stale = [
            k for k, v in self._logs.items() if v.finished and now - v.finished_at > self._retain
        ]
        for key in stale:
            del self._logs[key]


def frames_after(blob: bytes, after: int) -> tuple[bytes, int]:
    """Slice an archived frame blob to the frames after sequence `after`."""
    if not blob:
        return b"", after
    # Frames end with a blank line and their JSON never holds a raw newline.
    frames = blob.split(b"\n\n")[:-1]
    last = len(frames)
    return b"".join(f + b"\n\n" for f in frames[after:]), max(last, after)

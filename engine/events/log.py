"""What an event log is: per-turn encoded client events that SSE readers replay and follow.

Every method runs in the engine's loop. Appends never wait: a log that must reach another
process (Redis) queues them and writes them behind the turn's back.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class Chunk:
    """Frames after a reader's position: `frames` end at `last_seq`; `finished` means no more."""

    frames: bytes
    last_seq: int
    finished: bool


class EventLog(Protocol):
    """Where a running turn appends events and SSE responses read them.

    Only the holder of a turn's current lease appends; `takeover` fences the previous
    holder out (its later appends fail with LeaseLost) and continues its numbering.
    """

    def open(self, turn_id: str, lease: int = 1) -> None:
        """Create the log of a new turn."""

    def append(self, turn_id: str, event_type: str, data: dict[str, Any], lease: int = 1) -> int:
        """Encode and append one event; return its sequence number (1, 2, ...)."""

    def snapshot(self, turn_id: str, lease: int) -> bytes:
        """Return every frame appended so far (the holder's own view)."""

    def finish(self, turn_id: str, lease: int = 1, archived: bool = False) -> None:
        """Mark the turn's log complete (`snapshot` first gives its frames).

        `archived`: the database already holds them (the log may then keep less).
        """

    def forget(self, turn_id: str) -> None:
        """An end recorded late is in the database now: what was kept for it can go."""

    async def read(self, turn_id: str, after: int, timeout: float) -> Chunk | None:
        """Return the frames after `after`, waiting up to `timeout` for some; None if unknown."""

    async def takeover(self, turn_id: str, lease: int) -> bytes:
        """Fence older lease holders out and return every frame they appended."""

    async def release(self, turn_id: str, lease: int) -> None:
        """Write what is queued for the turn and forget it here, if `lease` still holds it."""

    async def close(self) -> None:
        """Write what is queued and free resources."""


def frames_after(blob: bytes, after: int) -> tuple[bytes, int]:
    """Slice an archived frame blob to the frames after sequence `after`."""
    if not blob:
        return b"", after
    frames = split_frames(blob)
    return b"".join(frames[after:]), max(len(frames), after)


def split_frames(blob: bytes) -> list[bytes]:
    """Split encoded events into whole frames; a torn last frame (a crash) is dropped."""
    # Frames end with a blank line and their JSON never holds a raw newline.
    return [f + b"\n\n" for f in blob.split(b"\n\n")[:-1]]


def wake_all(waiters: list[asyncio.Future[None]]) -> None:
    """Wake every reader of a list (those not woken or timed out already)."""
    for waiter in waiters:
        if not waiter.done():
            waiter.set_result(None)


async def wait_for_wake(waiters: list[asyncio.Future[None]], timeout: float) -> None:
    """Join `waiters` and wait until woken or `timeout` passes (a future, not a timer task)."""
    loop = asyncio.get_running_loop()
    waiter = loop.create_future()
    waiters.append(waiter)
    timer = loop.call_later(timeout, _expire, waiter)
    try:
        await waiter
    finally:
        timer.cancel()
        with contextlib.suppress(ValueError):  # a waker took the whole list already
            waiters.remove(waiter)


def _expire(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)

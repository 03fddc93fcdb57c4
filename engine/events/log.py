"""What an event log is: per-turn encoded client events that SSE readers replay and follow.

Every method runs in the engine's loop. Appends never wait: a log that must reach another
process (Redis) queues them and writes them behind the turn's back.

A turn's log has generations (epochs, `turns.log_epoch`). A worker taking a turn over that
finds no log of the turn's epoch (Redis restarted empty, a spool gone) cannot know what
clients saw, so it starts the next epoch: its events are numbered from `origin(epoch) + 1`,
above any id a client could hold, and open with `turn_start` `reset: true`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

# Whether a lease still holds its turn, by the database (a log asks before it writes a turn's
# lost frames again: a holder fenced meanwhile must not write over the new holder's).
Confirm = Callable[[str, int], Awaitable[bool]]
# Events one epoch may number: no turn comes near it, and ids stay under 18 digits.
EPOCH_SPAN = 1_000_000_000


def origin(epoch: int) -> int:
    """The sequence number just before the first event of `epoch`."""
    return epoch * EPOCH_SPAN


def starts_epoch(seq: int) -> bool:
    """True if `seq` is the first event of an epoch after the first."""
    return seq > EPOCH_SPAN and (seq - 1) % EPOCH_SPAN == 0


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

    def append(self, turn_id: str, event_type: str, data: Mapping[str, Any], lease: int = 1) -> int:
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

    async def takeover(self, turn_id: str, lease: int, epoch: int) -> bytes:
        """Fence older lease holders out and return every frame they appended.

        Returns b"" when the log holds nothing of `epoch` (it was lost): the caller then
        starts the next epoch with `restart`.
        """

    async def restart(self, turn_id: str, lease: int, epoch: int) -> None:
        """Drop what the log holds of the turn and go on in `epoch` (numbered after origin)."""

    async def release(self, turn_id: str, lease: int) -> None:
        """Write what is queued for the turn and forget it here, if `lease` still holds it."""

    async def close(self) -> None:
        """Write what is queued and free resources."""


def frames_after(blob: bytes, after: int) -> tuple[bytes, int]:
    """Slice an archived frame blob to the frames after sequence `after`."""
    if not blob:
        return b"", after
    frames = split_frames(blob)
    before = first_seq(blob) - 1  # an epoch's archive starts above the ids of the last
    return b"".join(frames[max(0, after - before) :]), max(before + len(frames), after)


def first_seq(blob: bytes) -> int:
    """The id of the first frame of encoded events (each frame starts with `id: N`)."""
    return int(blob[4 : blob.index(b"\n")]) if blob else 0


def last_seq(blob: bytes) -> int:
    """The id of the last whole frame of encoded events (0 for none)."""
    count = blob.count(b"\n\n")
    return first_seq(blob) + count - 1 if count else 0


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

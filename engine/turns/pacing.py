"""Batches of upstream reads: every stream in the loop reads at one shared beat.

Each upstream read costs a task wake-up, a decoder pass, a reader wake-up and a client
write, however few events it carries. Waiting for the next beat before reading again lets
the bytes of several events gather in the socket's buffer, so all of those costs are paid
once per beat instead of once per event. The beat bounds the latency this adds, and it
grows with the load: a worker with few streams has CPU to spare and reads at once, one
with FULL_AT paced streams or more waits the whole configured beat. The first read of a
call is never delayed, nor is a stream whose bytes are already waiting (a burst, the
offline demo model).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

# A read that took longer than this waited for the network.
WAITED = 0.002
# Paced streams from which the beat is as long as configured (shorter below, in proportion).
FULL_AT = 200


class Pacer:
    """One beat per event loop, armed only while some stream waits for it."""

    def __init__(self, loop: asyncio.AbstractEventLoop, interval: Callable[[], float]) -> None:
        self._loop, self._interval = loop, interval
        self._waiters: list[asyncio.Future[None]] = []
        self.streams = 0  # paced streams now (only the loop's thread counts them)

    async def beat(self) -> None:
        """Wait for the next beat (at once when batching is off)."""
        interval = self._interval() * min(1.0, self.streams / FULL_AT)
        if interval <= 0:
            return
        # A future per waiter: cancelling one stream (abort, watchdog) never touches others.
        waiter = self._loop.create_future()
        if not self._waiters:
            self._loop.call_later(interval, self._release)
        self._waiters.append(waiter)
        await waiter

    def _release(self) -> None:
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)


class Cadence:
    """One stream's reads: free while its bytes arrive faster than it reads, then paced."""

    __slots__ = ("_paced", "_pacer", "_since", "_waited")

    def __init__(self, pacer: Pacer) -> None:
        self._pacer, self._paced, self._waited = pacer, False, False
        self._since = time.monotonic()

    def arrived(self) -> None:
        """Call as each read returns: note whether it had to wait for the network."""
        if not self._paced:
            self._waited = time.monotonic() - self._since >= WAITED

    async def next(self) -> None:
        """Call after handling each read: return when the stream should read again."""
        if not self._paced:
            if not self._waited:
                self._since = time.monotonic()
                return
            # Caught up with the network: from now on read once per beat.
            self._paced = True
            self._pacer.streams += 1
        await self._pacer.beat()

    def close(self) -> None:
        """The stream ended: it no longer counts towards the load."""
        if self._paced:
            self._paced = False
            self._pacer.streams -= 1

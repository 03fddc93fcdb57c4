"""Batches of upstream reads: every stream in the loop reads at one shared beat.

Each upstream read costs a task wake-up, a decoder pass, a reader wake-up and a client
write, however few events it carries. Waiting for the next beat before reading again lets
the bytes of several events gather in the socket's buffer, so all of those costs are paid
once per beat instead of once per event. The beat bounds the latency this adds, so it
is paid only under load: below BATCH_FROM paced streams a worker has CPU to spare and
reads at once. (A beat shorter than the gap between a stream's events would cost a wake-up
more per event, not less, so the beat does not shrink with the load: it is on or off.)
The first read of a call is never delayed, nor is a stream whose bytes are already waiting
(a burst, the offline demo model).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

# A read that took longer than this waited for the network.
WAITED = 0.002
# Streams caught up with the network from which reads wait for the beat.
BATCH_FROM = 100


class Pacer:
    """One beat per event loop, armed only while some stream waits for it."""

    def __init__(self, loop: asyncio.AbstractEventLoop, interval: Callable[[], float]) -> None:
        self._loop, self._interval = loop, interval
        self._waiters: list[asyncio.Future[None]] = []
        self.streams = 0  # paced streams now (only the loop's thread counts them)

    async def beat(self) -> None:
        """Wait for the next beat (at once when batching is off)."""
        interval = self._interval()
        if interval <= 0 or self.streams < BATCH_FROM:
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

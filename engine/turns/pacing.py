"""Batches of upstream reads: every stream in the loop reads at a shared, staggered beat.

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

# Streams caught up with the network from which reads wait for the beat.
BATCH_FROM = 100
# Groups of streams whose beats are staggered across the interval.
PHASES = 4


class Pacer:
    """One beat per event loop, in PHASES staggered groups, armed only while some stream waits.

    Each stream reads once per interval, but the streams are dealt round-robin into PHASES
    groups released a fraction of the interval apart: one beat releasing every stream at
    once would queue the last of them behind all the others' work.
    """

    def __init__(self, interval: float, network_wait: float) -> None:
        self.interval, self.network_wait = interval, network_wait
        self._waiters: list[list[asyncio.Future[None]]] = [[] for _ in range(PHASES)]
        self._tick = 0  # the phase the next tick releases
        self._dealt = 0
        self._armed = False
        self.streams = 0  # paced streams now (only the loop's thread counts them)

    @property
    def waiting(self) -> int:
        """Streams waiting for their beat now."""
        return sum(map(len, self._waiters))

    def deal(self) -> int:
        """The phase of a stream that starts being paced."""
        self._dealt += 1
        return self._dealt % PHASES

    async def beat(self, phase: int = 0) -> None:
        """Wait for the next beat of `phase` (at once when batching is off)."""
        interval = self.interval
        if interval <= 0 or self.streams < BATCH_FROM:
            return
        # A future per waiter: cancelling one stream (stop, stall) never touches others.
        loop = asyncio.get_running_loop()
        waiter = loop.create_future()
        self._waiters[phase].append(waiter)
        if not self._armed:
            self._armed = True
            loop.call_later(interval / PHASES, self._release)
        await waiter

    def _release(self) -> None:
        phase, self._tick = self._tick, (self._tick + 1) % PHASES
        waiters, self._waiters[phase] = self._waiters[phase], []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)
        # Ticks go on while any phase waits, so every phase keeps its place in the interval.
        self._armed = any(self._waiters)
        if self._armed:
            asyncio.get_running_loop().call_later(self.interval / PHASES, self._release)


class Cadence:
    """One stream's reads: free while its bytes arrive faster than it reads, then paced."""

    __slots__ = ("_paced", "_pacer", "_phase", "_since", "_waited")

    def __init__(self, pacer: Pacer) -> None:
        self._pacer, self._paced, self._waited = pacer, False, False
        self._phase = 0
        self._since = time.monotonic()

    def arrived(self) -> None:
        """Call as each read returns: note whether it had to wait for the network."""
        if not self._paced:
            self._waited = time.monotonic() - self._since >= self._pacer.network_wait

    async def next(self) -> None:
        """Call after handling each read: return when the stream should read again."""
        if not self._paced:
            if not self._waited:
                self._since = time.monotonic()
                return
            # Caught up with the network: from now on read once per beat.
            self._paced = True
            self._pacer.streams += 1
            self._phase = self._pacer.deal()
        await self._pacer.beat(self._phase)

    def close(self) -> None:
        """The stream ended: it no longer counts towards the load."""
        if self._paced:
            self._paced = False
            self._pacer.streams -= 1

"""The shared beat: trickling streams read once per beat, bursts never wait, aborts stay apart,
and only a loaded worker waits for the beat.

The sleeps of WAITED * 2 are reads that waited for the network: the scenario, not waits.
"""

from __future__ import annotations

import asyncio
from itertools import pairwise

import pytest

from engine.turns import pacing
from engine.turns.pacing import Cadence, Pacer

# A read that took longer than this waited for the network (Timings.network_wait).
WAITED = 0.002


def run(coro: object) -> object:
    """Run a coroutine in a fresh loop."""
    return asyncio.run(coro)  # type: ignore[arg-type]


def test_streams_waiting_for_the_network_share_one_beat() -> None:
    async def scenario() -> tuple[int, int]:
        loop = asyncio.get_running_loop()
        pacer = Pacer(0.05, WAITED)
        pacer.streams = pacing.BATCH_FROM  # a loaded worker
        released: list[float] = []

        async def stream() -> None:
            cadence = Cadence(pacer)
            await asyncio.sleep(WAITED * 2)  # the first read waits for bytes
            cadence.arrived()
            await cadence.next()
            released.append(loop.time())

        armed = []
        original = loop.call_later

        def spy(delay: float, callback: object, *args: object) -> object:
            if callback == pacer._release:
                armed.append(delay)
            return original(delay, callback, *args)  # type: ignore[arg-type]

        loop.call_later = spy  # type: ignore[method-assign]
        await asyncio.gather(*(stream() for _ in range(20)))
        return len(armed), len(released)

    timers, moments = run(scenario())  # type: ignore[misc]
    assert timers <= pacing.PHASES  # one ticker for the whole loop, not a timer per stream
    assert moments == 20  # every stream released within one interval


def test_a_stream_whose_bytes_are_already_there_never_waits() -> None:
    async def scenario() -> int:
        pacer = Pacer(60.0, WAITED)
        cadence = Cadence(pacer)
        for _ in range(1000):  # a burst: each read returns at once
            cadence.arrived()
            await cadence.next()
        return pacer.waiting

    assert run(scenario()) == 0


def test_once_caught_up_a_stream_stays_paced() -> None:
    async def scenario() -> list[bool]:
        pacer = Pacer(0.01, WAITED)
        pacer.streams = pacing.BATCH_FROM  # a loaded worker
        cadence = Cadence(pacer)
        await asyncio.sleep(WAITED * 2)
        waited = []
        for _ in range(3):
            cadence.arrived()
            before = pacer.waiting
            task = asyncio.ensure_future(cadence.next())
            await asyncio.sleep(0)
            waited.append(pacer.waiting > before)
            await task
        return waited

    assert run(scenario()) == [True, True, True]


def test_cancelling_one_waiting_stream_leaves_the_others_waiting() -> None:
    async def scenario() -> tuple[bool, bool]:
        pacer = Pacer(0.05, WAITED)
        pacer.streams = pacing.BATCH_FROM
        first = asyncio.ensure_future(pacer.beat())
        second = asyncio.ensure_future(pacer.beat())
        await asyncio.sleep(0)
        first.cancel()
        with pytest.raises(asyncio.CancelledError):
            await first
        await second  # released by the beat, not cancelled with the first
        return first.cancelled(), second.cancelled()

    assert run(scenario()) == (True, False)


def test_no_batching_means_no_wait() -> None:
    async def scenario() -> int:
        pacer = Pacer(0.0, WAITED)
        await pacer.beat()
        return pacer.waiting

    assert run(scenario()) == 0


def test_only_a_loaded_worker_waits_and_ended_streams_stop_counting() -> None:
    async def scenario() -> tuple[int, int, int]:
        pacer = Pacer(0.01, WAITED)
        cadences = [Cadence(pacer) for _ in range(pacing.BATCH_FROM)]
        await asyncio.sleep(WAITED * 2)  # every stream's first read waited
        few = cadences[: pacing.BATCH_FROM - 1]
        for cadence in few:
            cadence.arrived()
        await asyncio.gather(*(c.next() for c in few))
        waited_few = pacer.waiting  # below the threshold: nobody waited
        cadences[-1].arrived()
        last = asyncio.ensure_future(cadences[-1].next())
        await asyncio.sleep(0)
        waited_loaded = pacer.waiting  # the threshold reached: the beat is on
        await last
        for cadence in cadences:
            cadence.close()
            cadence.close()  # twice: counted once
        return waited_few, waited_loaded, pacer.streams

    assert run(scenario()) == (0, 1, 0)


def test_phases_spread_the_streams_over_the_interval() -> None:
    interval = 0.2

    async def scenario() -> tuple[list[float], list[list[int]]]:
        loop = asyncio.get_running_loop()
        pacer = Pacer(interval, WAITED)
        pacer.streams = pacing.BATCH_FROM
        cadences = [Cadence(pacer) for _ in range(4 * pacing.PHASES)]
        await asyncio.sleep(WAITED * 2)  # every stream caught up with the network
        # Which tick released each read (counted, not timed), and the delay of every tick.
        ticks, delays = [0], []
        release, call_later = pacer._release, loop.call_later

        def counted() -> None:
            ticks[0] += 1
            release()

        def spy(delay: float, callback: object, *args: object) -> object:
            if callback == counted:
                delays.append(delay)
            return call_later(delay, callback, *args)  # type: ignore[arg-type]

        pacer._release = counted  # type: ignore[method-assign]
        loop.call_later = spy  # type: ignore[method-assign]
        released: list[list[int]] = [[] for _ in cadences]

        async def stream(index: int) -> None:
            for _ in range(3):
                cadences[index].arrived()
                await cadences[index].next()
                released[index].append(ticks[0])

        await asyncio.gather(*(stream(i) for i in range(len(cadences))))
        return delays, released

    delays, released = run(scenario())  # type: ignore[misc]
    # Ticks come a fraction of the interval apart,
    assert delays and set(delays) == {interval / pacing.PHASES}
    # each phase is released on its own tick, one after the other,
    firsts = sorted({times[0] for times in released})
    assert firsts == list(range(firsts[0], firsts[0] + pacing.PHASES))
    # and each stream still reads once per interval.
    for times in released:
        assert [b - a for a, b in pairwise(times)] == [pacing.PHASES] * (len(times) - 1)

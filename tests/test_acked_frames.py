"""AckedFrames: readers here see a turn's frames only as far as Redis has stored them."""

from __future__ import annotations

import asyncio

from engine.events.acked import AckedFrames
from engine.events.log import Chunk


def holding(frames: list[bytes], acked: int) -> AckedFrames:
    """Frames of turn "t" held in the running loop, `acked` of them stored by Redis."""
    held = AckedFrames()
    held.attach(asyncio.get_running_loop())
    held.hold("t", frames, acked)
    return held


async def waiting(held: AckedFrames, after: int) -> asyncio.Future[Chunk | None]:
    """A reader of "t" after `after`, already waiting."""
    reader = asyncio.ensure_future(held.read("t", after, 30.0))
    await asyncio.sleep(0)
    return reader


def test_frames_not_yet_stored_are_never_shown() -> None:
    async def scenario() -> None:
        frames: list[bytes] = []
        acked = holding(frames, 0)
        frames += [b"one\n", b"two\n"]
        chunk = await acked.read("t", 0, 0.01)
        assert chunk is not None and chunk.frames == b"" and not chunk.finished
        acked.acked({"t": 1}, set(), set())
        chunk = await acked.read("t", 0, 1.0)
        assert chunk is not None and (chunk.frames, chunk.last_seq) == (b"one\n", 1)

    asyncio.run(scenario())


def test_a_waiting_reader_wakes_when_redis_acknowledges() -> None:
    async def scenario() -> None:
        acked = holding([b"one\n"], 0)
        reader = await waiting(acked, 0)
        # The writer thread reports from another thread.
        await asyncio.get_running_loop().run_in_executor(None, acked.acked, {"t": 1}, set(), set())
        chunk = await asyncio.wait_for(reader, 5.0)
        assert chunk is not None and chunk.frames == b"one\n"

    asyncio.run(scenario())


def test_an_ended_turn_gives_every_frame_and_finishes() -> None:
    async def scenario() -> None:
        acked = holding([b"a\n", b"b\n", b"c\n"], 1)
        acked.acked({"t": 3}, {"t"}, set())
        await asyncio.sleep(0)
        # No longer held: later readers go to Redis, which has the end marker.
        assert await acked.read("t", 0, 0.01) is None

    asyncio.run(scenario())


def test_a_reader_waiting_when_the_turn_ends_gets_the_rest_and_the_end() -> None:
    async def scenario() -> None:
        acked = holding([b"a\n", b"b\n"], 1)
        reader = await waiting(acked, 1)
        acked.acked({"t": 2}, {"t"}, set())
        chunk = await asyncio.wait_for(reader, 5.0)
        assert chunk is not None
        assert (chunk.frames, chunk.last_seq, chunk.finished) == (b"b\n", 2, True)

    asyncio.run(scenario())


def test_a_fenced_or_handed_over_turn_sends_readers_to_redis() -> None:
    async def scenario() -> None:
        acked = holding([b"a\n"], 0)
        reader = await waiting(acked, 0)
        acked.acked({}, set(), {"t"})
        assert await asyncio.wait_for(reader, 5.0) is None
        acked.hold("u", [b"a\n"], 1)
        acked.drop("u")
        assert await acked.read("u", 0, 0.01) is None
        assert await acked.read("never-held", 0, 0.01) is None

    asyncio.run(scenario())

"""AckedFrames: readers here see a turn's frames only as far as Redis has stored them."""

from __future__ import annotations

import asyncio

from engine.events.acked import TAIL, AckedFrames
from engine.events.log import Chunk


def holding(frames: list[bytes], acked: int) -> AckedFrames:
    """Frames of turn "t" held in the running loop, `acked` of them stored by Redis."""
    held = AckedFrames()
    held.hold("t", frames, acked)
    return held


async def waiting(held: AckedFrames, after: int) -> asyncio.Future[Chunk | None]:
    """A reader of "t" after `after`, already waiting."""
    reader = asyncio.ensure_future(held.read("t", after, 30.0))
    await asyncio.sleep(0)
    return reader


def test_frames_not_yet_stored_are_never_shown() -> None:
    async def scenario() -> None:
        acked = holding([], 0)
        for frame in (b"one\n", b"two\n"):
            acked._turns["t"].add(frame)
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
        acked.acked({"t": 1}, set(), set())  # the writer task reports what Redis stored
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


def frame(seq: int) -> bytes:
    """A text event's frame of about 100 bytes."""
    return b'id: %d\nevent: block_delta\ndata: {"text":"%s"}\n\n' % (seq, b"word " * 12)


def test_stored_frames_past_the_tail_are_packed_and_the_turn_stays_whole() -> None:
    async def scenario() -> None:
        acked = holding([], 0)
        held = acked._turns["t"]
        frames = [frame(seq) for seq in range(1, 2001)]
        for seq, one in enumerate(frames, 1):
            held.add(one)
            if seq % 7 == 0:  # the writer thread acknowledges in batches
                acked.acked({"t": seq}, set(), set())
        assert held.size <= 2 * TAIL + len(frames[0]) * 7 and held.base > 1800
        assert held.whole() == b"".join(frames)
        # Readers this far behind go to Redis; the others get exactly the stored frames.
        assert await acked.read("t", held.base - 1, 0.01) is None
        for after in range(held.base, 1996):
            chunk = await acked.read("t", after, 0.01)
            assert chunk is not None
            assert (chunk.frames, chunk.last_seq) == (b"".join(frames[after:1995]), 1995)

    asyncio.run(scenario())


def test_frames_redis_has_not_stored_are_never_packed() -> None:
    async def scenario() -> None:
        acked = holding([], 0)
        held = acked._turns["t"]
        frames = [frame(seq) for seq in range(1, 1001)]
        for one in frames:
            held.add(one)
        acked.acked({"t": 10}, set(), set())
        assert held.base == 0 and len(held.frames) == 1000
        assert held.whole() == b"".join(frames)

    asyncio.run(scenario())


def test_a_taken_over_turn_is_held_packed_from_the_start() -> None:
    frames = [frame(seq) for seq in range(1, 501)]
    held = AckedFrames().hold("t", frames, 500)
    assert held.size <= 2 * TAIL and held.base + len(held.frames) == 500
    held.add(frame(501))
    assert held.whole() == b"".join(frames) + frame(501)

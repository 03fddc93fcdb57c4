"""Both event logs (in-process and Redis Streams) replay and follow alike, in one loop."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from config import Timings
from engine.events.log import frames_after
from engine.events.memory import MemoryEventLog
from engine.events.redis_log import RedisEventLog, _key
from models import new_id
from streaming.wire.protocol import decode_stream
from tests.backends import redis_or_skip
from tests.waits import PATIENCE

HOUR = 3600.0

Scenario = Callable[[Any], Awaitable[None]]


async def read_to_end(log: Any, turn: str, after: int) -> tuple[bytes, int]:
    """Read as an SSE reader does, until the log says the turn is finished."""
    frames, position = b"", after
    for _ in range(50):
        chunk = await log.read(turn, position, 0.1)
        frames, position = frames + chunk.frames, chunk.last_seq
        if chunk.finished:
            return frames, position
    raise AssertionError("the log never finished")


def in_loop(make: Callable[[], Any], scenario: Scenario) -> None:
    """Run `scenario` against a log made in a fresh loop, closing the log afterwards."""

    async def main() -> None:
        log = make()
        try:
            await scenario(log)
        finally:
            await log.close()

    asyncio.run(main())


@pytest.fixture
def redis_url() -> str:
    return redis_or_skip()


@pytest.fixture(params=["memory", "redis"])
def make_log(request: pytest.FixtureRequest) -> Callable[[], Any]:
    if request.param == "memory":
        return lambda: MemoryEventLog(None, Timings().log_retain)
    url = request.getfixturevalue("redis_url")
    return lambda: RedisEventLog(url, Timings())


def test_reads_replay_after_any_position_and_mark_the_end(make_log: Any) -> None:
    async def scenario(log: Any) -> None:
        turn = new_id("turn")
        log.open(turn)
        for i in range(5):
            assert log.append(turn, "block_delta", {"i": i, "text": "é\u2028"}) == i + 1
        whole = log.snapshot(turn, 1)
        log.finish(turn)
        assert [e[0] for e in decode_stream(whole)] == [1, 2, 3, 4, 5]
        for after in range(6):
            frames, last = await read_to_end(log, turn, after)
            assert last == 5 and frames == frames_after(whole, after)[0]

    in_loop(make_log, scenario)


def test_a_waiting_reader_wakes_on_append(make_log: Any) -> None:
    async def scenario(log: Any) -> None:
        turn = new_id("turn")
        log.open(turn)
        log.append(turn, "turn_start", {})
        loop = asyncio.get_running_loop()
        loop.call_later(0.2, lambda: log.append(turn, "block_delta", {"x": 1}))
        # A read's own timeout is an hour: only the append can end it within the patience.
        chunk = await asyncio.wait_for(log.read(turn, 1, HOUR), PATIENCE)
        if not chunk.frames:  # Redis: woken by the append, served once it is stored
            chunk = await asyncio.wait_for(log.read(turn, 1, HOUR), PATIENCE)
        assert chunk.last_seq == 2 and not chunk.finished
        assert decode_stream(chunk.frames)[0][1] == "block_delta"
        log.finish(turn)

    in_loop(make_log, scenario)


def test_an_idle_read_times_out_empty_and_unknown_turns_are_none(make_log: Any) -> None:
    async def scenario(log: Any) -> None:
        turn = new_id("turn")
        log.open(turn)
        log.append(turn, "turn_start", {})
        await read_to_first(log, turn)
        chunk = await log.read(turn, 1, 0.2)
        assert chunk.frames == b"" and chunk.last_seq == 1 and not chunk.finished
        unknown = await log.read(new_id("turn"), 0, 0.1)  # Redis can only say "nothing yet"
        assert unknown is None or (unknown.frames, unknown.finished) == (b"", False)
        log.finish(turn)

    in_loop(make_log, scenario)


async def read_to_first(log: Any, turn: str) -> None:
    """Wait until the turn's first frame can be read (Redis stores it behind the append)."""
    for _ in range(50):
        chunk = await log.read(turn, 0, 0.1)
        if chunk is not None and chunk.frames:
            return
    raise AssertionError("the first frame never arrived")


def test_redis_log_survives_a_batch_written_twice_and_expires_its_keys(redis_url: str) -> None:
    async def scenario(log: Any) -> None:
        turn = new_id("turn")
        log.open(turn)
        for i in range(3):
            log.append(turn, "block_delta", {"i": i})
        await log._flush()
        # A reply lost after the write: the same entries are sent again.
        log._pending = [(turn, 1, 0, 1, b"f", b"x"), (turn, 1, 0, 2, b"f", b"y")]
        await log._flush()
        log.append(turn, "turn_end", {})
        log.finish(turn)
        frames, _ = await read_to_end(log, turn, 0)
        assert [seq for seq, _, _ in decode_stream(frames)] == [1, 2, 3, 4]
        assert 0 < await log._redis.ttl(_key(turn)) <= 120

    timings = Timings().scaled(120 / Timings().log_expire)  # streams expire after 120 s
    in_loop(lambda: RedisEventLog(redis_url, timings), scenario)


def test_redis_log_reports_a_gap_instead_of_skipping_events(redis_url: str) -> None:
    async def scenario(log: Any) -> None:
        turn = new_id("turn")
        log.open(turn)
        for i in range(4):
            log.append(turn, "block_delta", {"i": i})
        log.finish(turn)
        await read_to_end(log, turn, 0)
        await log._redis.xdel(_key(turn), "0-2")  # a write that was lost
        assert await log.read(turn, 0, 0.1) is None
        assert (await log.read(turn, 2, 0.1)).frames.startswith(b"id: 3\n")

    in_loop(lambda: RedisEventLog(redis_url, Timings()), scenario)


def test_redis_log_holds_a_long_turn_in_bounded_memory_and_archives_it_whole(
    redis_url: str,
) -> None:
    async def scenario(log: Any) -> None:
        turn = new_id("turn")
        log.open(turn)
        for i in range(3000):
            log.append(turn, "block_delta", {"i": i, "text": "a few words of an answer"})
            if i % 500 == 499:
                await log._flush()  # as the writer task does, a batch at a time
        await log._flush()
        held = log._frames[turn]
        assert held.base > 2500 and held.size <= 16 * 1024
        whole = log.snapshot(turn, 1)
        assert [seq for seq, _, _ in decode_stream(whole)] == list(range(1, 3001))
        log.finish(turn)
        assert turn not in log._frames  # the worker's copy is gone: Redis serves reads
        frames, last = await read_to_end(log, turn, 0)
        assert (frames, last) == (whole, 3000)

    in_loop(lambda: RedisEventLog(redis_url, Timings()), scenario)


def test_a_reader_falls_back_to_the_archive_when_the_live_log_never_finishes(
    app_config: dict[str, Any],
) -> None:
    from app import create_app
    from services.sessions import create_session
    from tests.conftest import make_user

    app = create_app({**app_config, "EVENT_LOG_URL": redis_or_skip()})
    turns = app.extensions["turns"]
    try:
        user_id, _ = make_user(app.extensions["db"], "fallback")
        sid = create_session(app.extensions["db"], user_id)["id"]
        turn = turns.start(user_id, sid, "Am I over budget?")
        assert turns.wait(turn.turn_id)
        archived = turns.deps.turns.stored_turn(turn.turn_id)[1]
        redis = turns.deps.events._redis

        async def forget_the_end() -> None:
            # The worker died before Redis heard the end: drop the done marker and the tail.
            for entry_id, _ in await redis.xrevrange(_key(turn.turn_id), count=2):
                await redis.xdel(_key(turn.turn_id), entry_id)

        turns.runtime.run(forget_the_end())
        stitched, position, finished = b"", 0, False
        for _ in range(10):  # as the SSE reader loops
            chunk = turns.runtime.run(turns.reader.read(turn.turn_id, position, 0.2, True))
            stitched, position, finished = stitched + chunk.frames, chunk.last_seq, chunk.finished
            if finished:
                break
        assert finished and stitched == archived
    finally:
        app.extensions["engine"].close()
        app.extensions["db"].dispose()

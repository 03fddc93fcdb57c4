"""Both event logs (in-process and Redis Streams) replay and follow alike."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from engine.events.log import frames_after
from engine.events.memory import MemoryEventLog
from engine.events.redis_log import RedisEventLog
from models import new_id
from streaming.protocol import decode_stream
from tests.backends import redis_or_skip


def read_to_end(log: Any, turn: str, after: int) -> tuple[bytes, int]:
    """Read as an SSE reader does, until the log says the turn is finished."""
    frames, position = b"", after
    for _ in range(50):
        chunk = log.read(turn, position, 0.1)
        frames, position = frames + chunk.frames, chunk.last_seq
        if chunk.finished:
            return frames, position
    raise AssertionError("the log never finished")


@pytest.fixture
def redis_log() -> Iterator[RedisEventLog]:
    log = RedisEventLog(redis_or_skip())
    yield log
    log.close()


@pytest.fixture(params=["memory", "redis"])
def log(request: pytest.FixtureRequest) -> Any:
    if request.param == "memory":
        return MemoryEventLog()
    return request.getfixturevalue("redis_log")


def test_reads_replay_after_any_position_and_mark_the_end(log: Any) -> None:
    turn = new_id("turn")
    log.open(turn)
    for i in range(5):
        assert log.append(turn, "block_delta", {"i": i, "text": "é\u2028"}) == i + 1
    whole = log.snapshot(turn, 1)
    log.finish(turn)
    assert [e[0] for e in decode_stream(whole)] == [1, 2, 3, 4, 5]
    for after in range(6):
        frames, last = read_to_end(log, turn, after)
        assert last == 5 and frames == frames_after(whole, after)[0]


def test_a_blocked_reader_wakes_on_append(log: Any) -> None:
    turn = new_id("turn")
    log.open(turn)
    log.append(turn, "turn_start", {})
    threading.Timer(0.2, lambda: log.append(turn, "block_delta", {"x": 1})).start()
    started = time.monotonic()
    chunk = log.read(turn, 1, 5.0)
    assert time.monotonic() - started < 2.0
    assert chunk.last_seq == 2 and not chunk.finished
    assert decode_stream(chunk.frames)[0][1] == "block_delta"
    log.finish(turn)


def test_an_idle_read_times_out_empty_and_unknown_turns_are_none(log: Any) -> None:
    turn = new_id("turn")
    log.open(turn)
    log.append(turn, "turn_start", {})
    chunk = log.read(turn, 1, 0.2)
    assert chunk.frames == b"" and chunk.last_seq == 1 and not chunk.finished
    assert log.read(new_id("turn"), 0, 0.1) is None
    log.finish(turn)


def test_redis_log_survives_a_batch_written_twice_and_expires_its_keys() -> None:
    log = RedisEventLog(redis_or_skip(), retain_seconds=120)
    try:
        turn = new_id("turn")
        log.open(turn)
        for i in range(3):
            log.append(turn, "block_delta", {"i": i})
        log._flush()
        # A reply lost after the write: the same entries are sent again.
        log._pending = [(turn, 1, 1, b"f", b"x"), (turn, 1, 2, b"f", b"y")]
        log._flush()
        log.append(turn, "turn_end", {})
        log.finish(turn)
        frames, _ = read_to_end(log, turn, 0)
        assert [seq for seq, _, _ in decode_stream(frames)] == [1, 2, 3, 4]
        assert 0 < log._redis.ttl(RedisEventLog._key(turn)) <= 120
    finally:
        log.close()


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
        # The worker died before Redis heard the end: drop the done marker and the tail.
        events_key = RedisEventLog._key(turn.turn_id)
        for entry_id, _ in turns.events._redis.xrevrange(events_key, count=2):
            turns.events._redis.xdel(events_key, entry_id)
        stitched, position, finished = b"", 0, False
        for _ in range(10):  # as the SSE reader loops
            chunk = turns.read(turn.turn_id, position, 0.2)
            stitched, position, finished = stitched + chunk.frames, chunk.last_seq, chunk.finished
            if finished:
                break
        assert finished and stitched == archived
    finally:
        turns.shutdown()
        app.extensions["db"].dispose()


def test_redis_log_reports_a_gap_instead_of_skipping_events(redis_log: RedisEventLog) -> None:
    turn = new_id("turn")
    redis_log.open(turn)
    for i in range(4):
        redis_log.append(turn, "block_delta", {"i": i})
    redis_log.finish(turn)
    read_to_end(redis_log, turn, 0)
    redis_log._redis.xdel(RedisEventLog._key(turn), "0-2")  # a write that was lost
    assert redis_log.read(turn, 0, 0.1) is None
    assert redis_log.read(turn, 2, 0.1).frames.startswith(b"id: 3\n")


def test_redis_log_holds_a_long_turn_in_bounded_memory_and_archives_it_whole(
    redis_log: RedisEventLog,
) -> None:
    turn = new_id("turn")
    redis_log.open(turn)
    for i in range(3000):
        redis_log.append(turn, "block_delta", {"i": i, "text": "a few words of an answer"})
        if i % 500 == 499:
            redis_log._flush()  # as the writer thread does, a batch at a time
    redis_log._flush()
    held = redis_log._frames[turn]
    assert held.base > 2500 and held.size <= 16 * 1024
    whole = redis_log.snapshot(turn, 1)
    assert [seq for seq, _, _ in decode_stream(whole)] == list(range(1, 3001))
    redis_log.finish(turn)
    assert turn not in redis_log._frames  # the worker's copy is gone: Redis serves reads
    frames, last = read_to_end(redis_log, turn, 0)
    assert (frames, last) == (whole, 3000)

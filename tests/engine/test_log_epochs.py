"""A turn's event log that Redis lost: written again under the same ids while its holder
lives, restarted in the next epoch (ids above any a client holds, `reset`) after a takeover.

Each test restarts a Redis of its own empty, as a Redis without persistence restarts.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from config import Timings
from domain.errors import LeaseLost
from engine.events.log import EPOCH_SPAN, first_seq, frames_after, last_seq, origin
from engine.events.memory import MemoryEventLog
from engine.events.redis_follow import FIELD, chunk_of
from engine.events.redis_log import RedisEventLog
from models import new_id
from streaming.wire.protocol import decode_stream, encode_event
from tests.private_redis import PrivateRedis
from tests.waits import wait_until_async

SCALE = 0.05  # every timing at 1/20: the writer retries a lost Redis within milliseconds


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[PrivateRedis]:
    server = PrivateRedis(tmp_path / "redis")
    yield server
    server.close()


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(scenario())


async def read_until(log: Any, turn: str, after: int, last: int) -> tuple[bytes, int]:
    """Read as an SSE reader does until the frame numbered `last` arrived."""
    frames, position = b"", after
    for _ in range(400):
        chunk = await log.read(turn, position, 0.05)
        if chunk is not None and chunk.frames:
            frames, position = frames + chunk.frames, chunk.last_seq
        if position >= last:
            return frames, position
        await asyncio.sleep(0.01)  # a reader's pause before it asks again
    raise AssertionError(f"frame {last} never arrived (at {position})")


async def reconnected(call: Callable[[], Awaitable[Any]]) -> Any:
    """Call once more when a pooled connection turns out closed by the restart."""
    try:
        return await call()
    except redis.ConnectionError:
        return await call()


def test_ids_of_an_epoch_start_above_every_earlier_one() -> None:
    blob = b"".join(encode_event(origin(2) + i, "block_delta", {"i": i}) for i in (1, 2, 3))
    assert first_seq(blob) == 2 * EPOCH_SPAN + 1 and last_seq(blob) == 2 * EPOCH_SPAN + 3
    assert frames_after(blob, 57)[0] == blob  # a reader of an older epoch gets it all
    assert frames_after(blob, origin(2) + 2) == (
        blob[blob.index(b"id: 2000000003") :],
        3 + 2 * EPOCH_SPAN,
    )
    entries = [(f"0-{origin(1) + 1}".encode(), {FIELD: b"x"})]
    assert chunk_of(entries, 57) is not None, "a new epoch's first frame follows any id"
    assert chunk_of([(b"0-59", {FIELD: b"x"})], 57) is None, "a gap inside an epoch is refused"


def test_a_holder_writes_its_log_again_when_redis_lost_it(private_redis: PrivateRedis) -> None:
    async def scenario() -> None:
        timings = Timings().scaled(SCALE)
        holder, reader = RedisEventLog(private_redis.url, timings), None
        try:
            reader = RedisEventLog(private_redis.url, timings)  # another worker's readers
            turn = new_id("turn")
            holder.open(turn)
            for i in range(5):
                holder.append(turn, "block_delta", {"i": i})
            seen, position = await read_until(reader, turn, 0, 5)
            private_redis.restart_empty()
            for i in range(5, 8):
                holder.append(turn, "block_delta", {"i": i})
            more, position = await read_until(reader, turn, position, 8)
            assert [s for s, _, _ in decode_stream(seen + more)] == list(range(1, 9))
            assert seen + more == holder.snapshot(turn, 1), "the same frames, under the same ids"
            fresh, _ = await read_until(reader, turn, 0, 8)
            assert fresh == seen + more
        finally:
            await holder.close()
            if reader is not None:
                await reader.close()

    run(scenario)


def test_an_end_written_after_the_loss_is_never_added_after_a_gap(
    private_redis: PrivateRedis,
) -> None:
    async def scenario() -> None:
        timings = Timings().scaled(SCALE)
        holder = RedisEventLog(private_redis.url, timings)
        try:
            turn = new_id("turn")
            holder.open(turn)
            for i in range(3):
                holder.append(turn, "block_delta", {"i": i})
            await holder._flush()
            private_redis.restart_empty()
            holder.finish(turn, archived=True)  # its frames are in the database's archive
            await wait_until_async(lambda: not holder._pending, message="the end was not written")
            # The end alone would read as a finished turn with no events: nothing is added.
            assert await holder._redis.exists(f"chat:turn:{turn}:events") == 0
        finally:
            await holder.close()

    run(scenario)


def test_a_takeover_of_a_lost_log_starts_the_next_epoch(private_redis: PrivateRedis) -> None:
    async def scenario() -> None:
        timings = Timings().scaled(SCALE)
        dead, heir = RedisEventLog(private_redis.url, timings), None
        try:
            heir = RedisEventLog(private_redis.url, timings)
            turn = new_id("turn")
            dead.open(turn)
            for i in range(5):
                dead.append(turn, "block_delta", {"i": i})
            _, position = await read_until(heir, turn, 0, 5)
            private_redis.restart_empty()  # and the worker holding the turn dies with it
            assert await reconnected(lambda: heir.takeover(turn, 2, 0)) == b""
            await heir.restart(turn, 2, 1)
            assert heir.append(turn, "turn_start", {"reset": True}, lease=2) == origin(1) + 1
            heir.append(turn, "block_delta", {"i": 0}, lease=2)
            more, _ = await read_until(heir, turn, position, origin(1) + 2)
            assert [s for s, _, _ in decode_stream(more)] == [origin(1) + 1, origin(1) + 2]
            assert decode_stream(more)[0][2] == {"reset": True}
            # The dead holder, woken, is fenced out of the new epoch: at its next batch, or
            # already at the one it was retrying when Redis went (the restart cut its reply).
            with contextlib.suppress(LeaseLost):
                dead.append(turn, "block_delta", {"i": 5})
                await reconnected(dead._flush)
            assert (turn, 1) in dead._fenced
            assert await heir.takeover(turn, 3, 1) == more, "a later takeover finds the epoch"
        finally:
            await dead.close()
            if heir is not None:
                await heir.close()

    run(scenario)


def test_the_in_process_log_restarts_an_epoch_when_its_spool_is_gone(tmp_path: Path) -> None:
    async def scenario() -> None:
        spool = tmp_path / "spool"
        first = MemoryEventLog(str(spool), Timings().log_retain)
        turn = new_id("turn")
        first.open(turn)
        first.append(turn, "turn_start", {})
        (spool / f"{turn}.sse").unlink()  # the spool was lost with the process
        restarted = MemoryEventLog(str(spool), Timings().log_retain)
        assert await restarted.takeover(turn, 2, 0) == b""
        await restarted.restart(turn, 2, 1)
        for i in range(3):
            restarted.append(turn, "block_delta", {"i": i}, lease=2)
        whole = restarted.snapshot(turn, 2)
        assert [s for s, _, _ in decode_stream(whole)] == [origin(1) + i for i in (1, 2, 3)]
        chunk = await restarted.read(turn, 1, 0)
        assert chunk.frames == whole, "a reader of the lost epoch gets the new one whole"
        # The process dies again: the spool has epoch 1.
        again = MemoryEventLog(str(spool), Timings().log_retain)
        assert await again.takeover(turn, 3, 1) == whole
        assert await MemoryEventLog(str(spool), Timings().log_retain).takeover(turn, 4, 0) == b""

    run(scenario)


def test_a_holder_fenced_in_the_database_never_writes_a_lost_log_again(
    private_redis: PrivateRedis,
) -> None:
    asked: list[tuple[str, int]] = []

    async def fenced(turn_id: str, lease: int) -> bool:
        asked.append((turn_id, lease))
        return False  # another worker took the turn over (its Redis lease key was lost)

    async def scenario() -> None:
        stale = RedisEventLog(private_redis.url, Timings().scaled(SCALE), fenced)
        try:
            turn = new_id("turn")
            stale.open(turn)
            stale.append(turn, "turn_start", {})
            await stale._flush()
            private_redis.restart_empty()
            stale.append(turn, "block_delta", {"i": 1})
            await wait_until_async(lambda: asked and not stale._pending and not stale._rewriting)
            assert asked == [(turn, 1)]
            assert await stale._redis.exists(f"chat:turn:{turn}:events") == 0
        finally:
            await stale.close()

    run(scenario)

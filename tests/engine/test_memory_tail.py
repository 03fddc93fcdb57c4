"""The in-process log keeps only a tail of frames in memory: the spool or archive has the rest."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from config import Timings
from engine.events.log import frames_after, split_frames
from engine.events.memory import TAIL, MemoryEventLog
from models import new_id

EVENTS = 1500  # about 100 bytes each: several times 2 * TAIL


RETAIN = Timings().log_retain


def in_memory(log: MemoryEventLog, turn: str) -> int:
    """Bytes of frames the log holds in memory for `turn`."""
    return sum(map(len, log._logs[turn].frames))


def fill(log: MemoryEventLog, turn: str) -> None:
    log.open(turn)
    for i in range(EVENTS):
        log.append(turn, "block_delta", {"i": i, "text": "x" * (i % 97)})


def test_a_spooled_turn_keeps_a_bounded_tail_and_serves_every_position(tmp_path: Path) -> None:
    log, turn = MemoryEventLog(str(tmp_path), RETAIN), new_id("turn")
    fill(log, turn)
    whole = log.snapshot(turn, 1)
    assert len(split_frames(whole)) == EVENTS and len(whole) > 16 * TAIL
    assert TAIL <= in_memory(log, turn) <= 2 * TAIL
    for after in (0, 1, 17, EVENTS // 2, EVENTS - 3, EVENTS, EVENTS + 4):
        chunk = asyncio.run(log.read(turn, after, 0.0))
        assert chunk is not None and not chunk.finished
        assert (chunk.frames, chunk.last_seq) == frames_after(whole, after)
    asyncio.run(log.close())


@pytest.mark.parametrize("spooled", [True, False])
def test_an_archived_end_keeps_only_the_tail_and_sends_older_reads_to_the_archive(
    tmp_path: Path, spooled: bool
) -> None:
    log = MemoryEventLog(str(tmp_path) if spooled else None, RETAIN)
    turn = new_id("turn")
    fill(log, turn)
    whole = log.snapshot(turn, 1)
    log.finish(turn, 1, archived=True)
    assert in_memory(log, turn) <= TAIL
    assert asyncio.run(log.read(turn, 0, 0.0)) is None  # the reader asks the database's archive
    last = asyncio.run(log.read(turn, EVENTS - 2, 0.0))
    assert last is not None and last.finished
    assert (last.frames, last.last_seq) == frames_after(whole, EVENTS - 2)
    assert list(tmp_path.iterdir()) == []  # the spool is gone


def test_an_unarchived_end_keeps_every_frame_for_whoever_records_it(tmp_path: Path) -> None:
    log, turn = MemoryEventLog(str(tmp_path), RETAIN), new_id("turn")
    fill(log, turn)
    whole = log.snapshot(turn, 1)
    log.finish(turn, 1, archived=False)
    chunk = asyncio.run(log.read(turn, 0, 0.0))
    assert chunk is not None and chunk.frames == whole and chunk.last_seq == EVENTS
    assert asyncio.run(log.takeover(turn, 2, 0)) == whole


def test_a_restarted_log_takes_a_long_spool_over_and_trims_it_on_the_next_append(
    tmp_path: Path,
) -> None:
    first, turn = MemoryEventLog(str(tmp_path), RETAIN), new_id("turn")
    fill(first, turn)
    whole = first.snapshot(turn, 1)
    asyncio.run(first.close())  # the process stops; its spool stays
    second = MemoryEventLog(str(tmp_path), RETAIN)
    assert asyncio.run(second.takeover(turn, 2, 0)) == whole
    assert second.append(turn, "block_delta", {"i": "next"}, 2) == EVENTS + 1
    assert in_memory(second, turn) <= 2 * TAIL
    chunk = asyncio.run(second.read(turn, 5, 0.0))
    assert chunk is not None and chunk.last_seq == EVENTS + 1
    assert chunk.frames.startswith(frames_after(whole, 5)[0])
    asyncio.run(second.close())

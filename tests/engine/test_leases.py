"""Leases fence every write of a turn; workers beat once for all their turns; takeovers."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select, update

from config import Timings
from domain.errors import LeaseLost
from engine.events.memory import MemoryEventLog
from engine.store.fence import Lease
from engine.store.messages import MessageStore
from engine.store.turns import TurnStore
from engine.store.workers import WorkerRegistry
from models import Message, ToolRun, Turn, Worker
from models.db import Database
from services.sessions import create_session
from tests.backends import migrated_postgres


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request: pytest.FixtureRequest, db_url: str) -> Iterator[Database]:
    """Each test here on both databases: the fenced writes are SQL each dialect runs."""
    if request.param == "sqlite":
        database = Database(db_url)
        yield database
        database.dispose()
        return
    with migrated_postgres() as url:
        database = Database(url)
        yield database
        database.dispose()


@pytest.fixture
def stores(db: Any) -> tuple[TurnStore, MessageStore]:
    return TurnStore(db), MessageStore(db)


def workers(db: Any, n: int) -> list[WorkerRegistry]:
    """Register `n` workers."""
    out = [WorkerRegistry(db) for _ in range(n)]
    for worker in out:
        worker.register()
    return out


def rows(db: Any, model: Any) -> list[Any]:
    with db.read() as s:
        return list(s.scalars(select(model)))


def test_after_a_takeover_every_write_with_the_old_lease_fails_and_changes_nothing(
    db: Any, user: tuple[int, str], stores: tuple[TurnStore, MessageStore]
) -> None:
    turns, messages = stores
    dead, alive = workers(db, 2)
    new, old, _ = turns.start_turn(user[0], create_session(db, user[0])["id"], "hi", dead.worker_id)
    messages.add_message(old, "msg_a", "assistant", [], "streaming")
    with db.transaction() as s:  # the dead worker's heartbeat is long gone
        s.execute(update(Worker).where(Worker.id == dead.worker_id).values(heartbeat_at=past(s)))
    [orphan] = turns.take_orphans(alive.worker_id, stale_after=30, limit=10)
    assert orphan.lease == Lease(new.turn_id, new.session_id, 2) and orphan.takeovers == 1
    before = (rows(db, Message), rows(db, ToolRun))
    attempts = [
        lambda: messages.add_message(old, "msg_b", "assistant", [{"type": "text"}], "complete"),
        lambda: messages.update_message(old, "msg_a", status="complete"),
        lambda: messages.discard_streaming(old),
        lambda: messages.claim_tool(old, "toolu_1", "t", {}),
        lambda: messages.finish_tool(old, "toolu_1", [], False, 1),
        lambda: turns.finish_turn(old, "completed", 1, None, b"id: 1\n\n"),
    ]
    for attempt in attempts:
        with pytest.raises(LeaseLost):
            attempt()
    after = (rows(db, Message), rows(db, ToolRun))
    assert [(m.id, m.status) for m in after[0]] == [(m.id, m.status) for m in before[0]]
    assert after[1] == before[1] == []
    assert not turns.release(old)
    messages.update_message(orphan.lease, "msg_a", status="discarded")  # the new holder writes


def test_a_claimed_tool_use_id_is_never_claimed_again(
    db: Any, user: tuple[int, str], stores: tuple[TurnStore, MessageStore]
) -> None:
    turns, messages = stores
    new, first, _ = turns.start_turn(user[0], create_session(db, user[0])["id"], "hi")
    assert messages.claim_tool(first, "toolu_1", "t", {"a": 1}) is None
    # A claim retried by its own holder (its reply was lost with its connection) is its own.
    assert messages.claim_tool(first, "toolu_1", "t", {"a": 1}) is None
    with db.transaction() as s:  # the turn is taken over: the claim may have run, or not
        s.execute(update(Turn).where(Turn.id == new.turn_id).values(lease=2))
    lease = Lease(new.turn_id, new.session_id, 2)
    again = messages.claim_tool(lease, "toolu_1", "t", {"a": 1})
    assert again is not None and (again.tool_use_id, again.status) == ("toolu_1", "running")
    done = messages.finish_tool(lease, "toolu_1", [{"type": "text", "text": "4"}], False, 3)
    assert (done.status, done.result, done.is_error) == (
        "done",
        [{"type": "text", "text": "4"}],
        False,
    )
    assert messages.claim_tool(lease, "toolu_1", "t", {"a": 1}) == done
    assert [(r.tool_use_id, r.status) for r in rows(db, ToolRun)] == [("toolu_1", "done")]


def test_a_write_tool_left_running_is_claimed_again_and_its_change_is_stored_once(
    db: Any, user: tuple[int, str], stores: tuple[TurnStore, MessageStore]
) -> None:
    """A side-effect run stores its result with its change, so one found `running` after a
    takeover made no change: the new holder runs it, and the old holder can no longer."""
    turns, messages = stores
    new, first, _ = turns.start_turn(user[0], create_session(db, user[0])["id"], "hi")
    assert messages.claim_tool(first, "toolu_w", "set_budget", {}, None, True) is None
    with db.transaction() as s:  # the holder dies before its write commits; a takeover
        s.execute(update(Turn).where(Turn.id == new.turn_id).values(lease=2))
    second = Lease(new.turn_id, new.session_id, 2)
    assert messages.claim_tool(second, "toolu_w", "set_budget", {}, None, True) is None
    late = [{"type": "text", "text": "late"}]
    with db.transaction() as s:  # the old holder, fenced out, must roll its change back
        assert not messages.applied(first, "toolu_w", s, late)
    result = [{"type": "text", "text": "set"}]
    with db.transaction() as s:
        assert messages.applied(second, "toolu_w", s, result)
    # Whoever finishes it afterwards (a timed-out or cancelled caller) keeps what was done.
    done = messages.finish_tool(second, "toolu_w", [{"type": "text", "text": "timed out"}], True, 9)
    assert (done.status, done.result, done.is_error) == ("done", result, False)
    assert messages.claim_tool(second, "toolu_w", "set_budget", {}, None, True) == done


def test_a_turn_taken_by_one_reaper_is_skipped_by_the_next(
    db: Any, user: tuple[int, str], stores: tuple[TurnStore, MessageStore]
) -> None:
    turns, _ = stores
    a, b = workers(db, 2)
    _, lease, _ = turns.start_turn(user[0], create_session(db, user[0])["id"], "hi", a.worker_id)
    assert turns.release(lease)  # handed over: any worker may take it at once
    assert len(turns.take_orphans(b.worker_id, stale_after=30, limit=10)) == 1
    assert turns.take_orphans(a.worker_id, stale_after=30, limit=10) == []


def test_a_worker_never_takes_its_own_turns_however_late_its_heartbeat(
    db: Any, user: tuple[int, str], stores: tuple[TurnStore, MessageStore]
) -> None:
    turns, _ = stores
    [me] = workers(db, 1)
    turns.start_turn(user[0], create_session(db, user[0])["id"], "hi", me.worker_id)
    with db.transaction() as s:
        s.execute(update(Worker).values(heartbeat_at=past(s)))
    assert turns.take_orphans(me.worker_id, stale_after=30, limit=10) == []


def test_one_heartbeat_statement_keeps_every_turn_of_a_worker_alive(
    db: Any, user: tuple[int, str], stores: tuple[TurnStore, MessageStore]
) -> None:
    turns, _ = stores
    busy, reaper = workers(db, 2)
    for i in range(5):
        turns.start_turn(user[0], create_session(db, user[0])["id"], f"q{i}", busy.worker_id)
    with db.transaction() as s:
        s.execute(update(Worker).where(Worker.id == busy.worker_id).values(heartbeat_at=past(s)))
    statements = count_statements(db, busy.beat)
    assert statements == ["UPDATE workers"], statements
    assert turns.take_orphans(reaper.worker_id, stale_after=30, limit=10) == []
    with db.transaction() as s:
        s.execute(update(Worker).where(Worker.id == busy.worker_id).values(heartbeat_at=past(s)))
    assert len(turns.take_orphans(reaper.worker_id, stale_after=30, limit=10)) == 5


def test_an_in_process_log_fences_the_older_holder_and_continues_its_numbering(
    tmp_path: Any,
) -> None:
    log = MemoryEventLog(str(tmp_path), Timings().log_retain)
    log.open("turn_x", 1)
    for i in range(3):
        log.append("turn_x", "block_delta", {"i": i}, 1)
    assert asyncio.run(log.takeover("turn_x", 2, 0)).count(b"\n\n") == 3
    with pytest.raises(LeaseLost):
        log.append("turn_x", "block_delta", {"late": True}, 1)
    # The fenced holder leaving must not drop the new one's log.
    asyncio.run(log.release("turn_x", 1))
    assert log.append("turn_x", "turn_end", {}, 2) == 4
    # A restarted process finds the spool and goes on after the last whole frame.
    (tmp_path / "turn_x.sse").write_bytes((tmp_path / "turn_x.sse").read_bytes() + b"id: 5\nev")
    restarted = MemoryEventLog(str(tmp_path), Timings().log_retain)
    assert asyncio.run(restarted.takeover("turn_x", 3, 0)).count(b"\n\n") == 4
    assert restarted.append("turn_x", "turn_end", {}, 3) == 5


def past(s: Any) -> Any:
    """A time long before now by the database's clock."""
    from engine.store.fence import db_now

    return db_now(s) - timedelta(seconds=3600)


def count_statements(db: Any, fn: Any) -> list[str]:
    """Run `fn` and return the first two words of each write statement it sent."""
    from sqlalchemy import event

    seen: list[str] = []

    def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        words = statement.split()
        if words[0] in ("INSERT", "UPDATE", "DELETE"):
            seen.append(" ".join(words[:2]))

    event.listen(db.engine, "before_cursor_execute", record)
    try:
        fn()
    finally:
        event.remove(db.engine, "before_cursor_execute", record)
    return seen


def test_worker_deaths_in_a_row_without_progress_are_counted_and_hand_overs_are_not(
    db: Any, user: tuple[int, str], stores: tuple[TurnStore, MessageStore]
) -> None:
    turns, messages = stores
    [holder] = workers(db, 1)
    _, lease, _ = turns.start_turn(
        user[0], create_session(db, user[0])["id"], "hi", holder.worker_id
    )
    stalls = []
    for step in range(9):
        if step < 5:  # more hand-overs by draining workers than MAX_TAKEOVERS: no deaths
            assert turns.release(lease)
        else:
            with db.transaction() as s:  # its worker dies: the heartbeat stops
                s.execute(
                    update(Worker).where(Worker.id == holder.worker_id).values(heartbeat_at=past(s))
                )
        holder = WorkerRegistry(db)
        [orphan] = turns.take_orphans(holder.worker_id, stale_after=30, limit=5)
        lease = orphan.lease
        stalls.append(orphan.stalls)
        if step == 6:  # this holder gets somewhere: a message is finished
            messages.add_message(lease, "msg_done", "assistant", [{"type": "text"}], "complete")
    assert stalls == [0, 0, 0, 0, 0, 1, 2, 1, 2]

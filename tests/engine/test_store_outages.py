"""A database that stops answering is waited out: writes retry, turns finish, nothing is lost.

The outage here is SQLite's own error for a full disk, raised for every statement while the
window is open (the whole store is out, reads included), at the engine's real timings
scaled together.
"""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from sqlalchemy import select, update
from sqlalchemy.exc import OperationalError

from config import Timings
from domain.errors import StorageUnavailable
from engine.store.approvals import ApprovalStore
from engine.store.durable import Store
from engine.store.fence import Lease
from engine.store.messages import MessageStore
from engine.store.turns import TurnStore
from engine.turns.turn import Turn
from models import Message
from models import Turn as TurnRow
from models.db import Database
from services.sessions import create_session
from streaming.messages.history import validate_history
from tests.engine.conftest import make_deps, run_to_end
from tests.engine.streams import answer, tool_use
from tests.engine.toys import CALLS
from tests.helpers import ScriptedModel, assert_well_formed, text_of
from tests.outage import failing_statements

SCALE = 0.02  # store outage 2.4 s, backoff cap 40 ms, stale after 120 ms...


def unreachable(db: Database) -> Any:
    """While the yielded event is set, every statement of `db` fails as on a full disk."""
    return failing_statements(db.engine)


def out_for(down: threading.Event, seconds: float) -> None:
    """Take the store down now, and back up after `seconds` (in the background)."""
    down.set()
    threading.Timer(seconds, down.clear).start()


def test_a_statement_is_retried_through_an_outage_and_given_up_past_the_bound(
    db: Database,
) -> None:
    timings = Timings().scaled(SCALE)
    pool = ThreadPoolExecutor(2)
    store = Store(pool, timings)
    ping = select(1)

    def query() -> int:
        with db.begin_read() as conn:
            return conn.scalar(ping)

    with unreachable(db) as down:
        out_for(down, timings.store_outage / 4)
        assert asyncio.run(store.durable(query)) == 1
        assert store.reachable_for() < timings.store_outage
        down.set()
        started = time.monotonic()
        with pytest.raises(StorageUnavailable):
            asyncio.run(store.durable(query))
        # Waited the whole bound out: a lower bound, which load can only lengthen.
        assert time.monotonic() - started >= timings.store_outage
        down.clear()
    with pytest.raises(ZeroDivisionError):  # not an outage: raised at once, never retried
        asyncio.run(store.durable(lambda: 1 / 0))
    pool.shutdown()


def test_writes_retried_after_a_lost_commit_change_nothing_twice(
    db: Database, user: tuple[int, str]
) -> None:
    turns, messages = TurnStore(db), MessageStore(db)
    new, lease, _ = turns.start_turn(user[0], create_session(db, user[0])["id"], "hi")
    # Each first commit happened, but its reply was lost with the connection: run again.
    for _ in range(2):
        messages.add_message(lease, "msg_once", "assistant", [{"type": "text"}], "complete")
    for _ in range(2):
        turns.finish_turn(lease, "completed", 1, None, b"id: 1\nevent: turn_end\ndata: {}\n\n")
    with db.read() as s:
        assert s.scalars(select(Message.id).where(Message.id == "msg_once")).all() == ["msg_once"]
        assert s.get(TurnRow, new.turn_id).status == "completed"


def run_through(db: Database, user: tuple[int, str], scripts: list[Any], outage: float) -> Any:
    """Run a turn while the store goes out for `outage` seconds just after it starts."""
    timings = Timings().scaled(SCALE)
    model = ScriptedModel(scripts)
    deps = make_deps(db, ThreadPoolExecutor(4), model, timings)
    sid = create_session(db, user[0])["id"]
    new, lease, _ = deps.turns.start_turn(user[0], sid, "What is the weather in SF?")

    async def main() -> tuple[str, list[Any]]:
        deps.events.open(new.turn_id)
        turn = Turn(deps, new, user[0], lease)
        out_for(down, outage)
        return await run_to_end(turn, deps, new)

    CALLS.clear()
    with unreachable(db) as down:
        status, events = asyncio.run(main())
    return status, events, model, sid, new


def test_a_turn_waits_out_an_outage_shorter_than_the_bound_and_completes(
    db: Database, user: tuple[int, str]
) -> None:
    scripts = [tool_use("toolu_w", "get_weather", ['{"location": "Oslo"}']), answer("Cold.")]
    timings = Timings().scaled(SCALE)
    status, events, _, sid, new = run_through(db, user, scripts, timings.store_outage / 2)
    assert status == "completed"
    assert_well_formed(events)
    assert text_of(events) == "Cold."
    assert CALLS == [("get_weather", {"location": "Oslo", "units": "f"})]  # once
    stored = MessageStore(db).conversation(sid)
    assert validate_history(stored, expect_user_last=False) == []
    assert stored[-1]["content"] == [{"type": "text", "text": "Cold."}]
    with db.read() as s:
        assert "streaming" not in s.scalars(select(Message.status)).all()
        assert s.get(TurnRow, new.turn_id).status == "completed"


def test_past_the_bound_the_turn_fails_honestly_and_its_rows_settle_when_the_store_is_back(
    db: Database, user: tuple[int, str]
) -> None:
    timings = Timings().scaled(SCALE)
    status, events, _, _, new = run_through(db, user, [answer("Lost.")], timings.store_outage * 2)
    assert status == "failed"
    assert_well_formed(events)
    errors = [d["code"] for _, t, d in events if t == "turn_error"]
    assert errors == ["storage_unavailable"]
    assert events[-1][2]["status"] == "failed"
    with db.read() as s:  # recorded once the store came back
        row = s.get(TurnRow, new.turn_id)
        assert (row.status, row.error_code) == ("failed", "storage_unavailable")
        assert "streaming" not in s.scalars(select(Message.status)).all()


def test_no_turn_is_taken_over_until_the_store_has_been_back_for_stale_after(
    db: Database, user: tuple[int, str]
) -> None:
    from engine.store.workers import WorkerRegistry
    from engine.turns.upkeep import Upkeep

    timings = Timings().scaled(SCALE)
    pool = ThreadPoolExecutor(2)
    deps = make_deps(db, pool, ScriptedModel([]), timings)
    dead = WorkerRegistry(db)
    dead.register()
    sid = create_session(db, user[0])["id"]
    deps.turns.start_turn(user[0], sid, "hi", dead.worker_id)
    launched: list[str] = []

    class Service:
        turns: dict[str, Any] = {}

        def __init__(self) -> None:
            self.deps, self.timings = deps, timings
            self.approvals = ApprovalStore(db)

        def launch(self, run: Any) -> None:
            launched.append(run.turn.turn_id)

    upkeep = Upkeep(Service(), WorkerRegistry(db))  # type: ignore[arg-type]
    # Time passes: the dead worker's heartbeat is stale by now (the scenario, not a wait).
    time.sleep(timings.stale_after * 2)

    async def scenario() -> None:
        with unreachable(db) as down:
            down.set()
            with pytest.raises(OperationalError):  # the reaper's own query fails
                await upkeep.reap()
            down.clear()
        await upkeep.reap()  # back, but every heartbeat was missed while it was out
        assert launched == []
        await asyncio.sleep(timings.stale_after)  # reachable this long: the scenario
        await upkeep.reap()
        assert len(launched) == 1

    asyncio.run(scenario())
    pool.shutdown()


def test_a_takeover_whose_log_is_unreachable_gives_the_turn_back_uncounted(
    db: Database, user: tuple[int, str]
) -> None:
    from engine.store.workers import WorkerRegistry

    class Unreachable:
        async def takeover(self, turn_id: str, lease: int, epoch: int) -> bytes:
            raise ConnectionError("Redis is down")

        async def release(self, turn_id: str, lease: int) -> None:
            raise ConnectionError("Redis is down")

    pool = ThreadPoolExecutor(2)
    deps = make_deps(db, pool, ScriptedModel([]), Timings().scaled(SCALE), events=Unreachable())
    dead = WorkerRegistry(db)
    dead.register()
    sid = create_session(db, user[0])["id"]
    new, _, _ = deps.turns.start_turn(user[0], sid, "hi", dead.worker_id)
    dead.retire()
    with db.transaction() as s:  # its worker died: the row names a worker that is gone
        s.execute(update(TurnRow).values(worker_id="wrk_gone"))
    first = WorkerRegistry(db)
    first.register()
    [orphan] = deps.turns.take_orphans(first.worker_id, 30, 5)
    assert orphan.stalls == 1  # a worker died
    turn = Turn(deps, orphan.turn, user[0], orphan.lease, orphan.takeovers, orphan.stalls)
    assert asyncio.run(turn.run()) == "handback"
    with db.read() as s:
        assert s.get(TurnRow, new.turn_id).worker_id is None  # free for any reaper
    [again] = deps.turns.take_orphans(first.worker_id, 30, 5)
    assert again.stalls == 1, "a hand-back is not a death"
    assert again.lease == Lease(new.turn_id, sid, orphan.lease.number + 1)
    pool.shutdown()

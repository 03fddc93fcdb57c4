"""The same schema and a whole turn on PostgreSQL (CI requires it: REQUIRE_POSTGRES=1)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import select

from domain.errors import TurnConflict
from engine.store.starts import Ask
from models.migrate import upgrade
from services.sessions import create_session, get_session
from streaming.messages.history import validate_history
from streaming.wire.protocol import decode_stream
from tests.backends import fresh_postgres
from tests.conftest import make_user
from tests.helpers import assert_well_formed


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A fresh, empty PostgreSQL database, dropped afterwards."""
    with fresh_postgres() as url:
        yield url


def test_a_demo_turn_runs_and_is_stored_on_postgres(pg_url: str) -> None:
    upgrade(pg_url)
    from app import create_app

    app = create_app({"DATABASE_URL": pg_url, "ANTHROPIC_API_KEY": None, "SECRET_KEY": "s"})
    try:
        db, turns = app.extensions["db"], app.extensions["turns"]
        user_id, _ = make_user(db, "pg")
        from demo_data.generator import seed_finance

        seed_finance(db, user_id, months=3, seed=1)
        sid = create_session(db, user_id)["id"]
        turn = turns.start(user_id, sid, "What did I spend on groceries last month?")
        with pytest.raises(TurnConflict):
            turns.start(user_id, sid, Ask("again", if_busy="reject"))
        assert turns.wait(turn.turn_id)
        events = decode_stream(turns.peek(turn.turn_id, 0).frames)
        assert_well_formed(events)
        assert events[-1][2]["status"] == "completed"
        messages = get_session(db, user_id, sid)["messages"]
        history: list[dict[str, Any]] = [
            {"role": m["role"], "content": m["content"]} for m in messages
        ]
        assert validate_history(history, expect_user_last=False) == []
    finally:
        app.extensions["engine"].close()
        app.extensions["db"].dispose()


def test_reapers_of_many_workers_take_each_orphan_once_and_skewed_clocks_kill_nothing(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading
    from datetime import timedelta

    import engine.store.fence as fence
    from engine.store.turns import TurnStore
    from engine.store.workers import WorkerRegistry
    from models.db import Database

    upgrade(pg_url)
    db = Database(pg_url)
    try:
        user_id, _ = make_user(db, "reapers")
        turns, owner = TurnStore(db), WorkerRegistry(db)
        owner.register()
        for i in range(40):
            turns.start_turn(user_id, create_session(db, user_id)["id"], f"q{i}", owner.worker_id)
        # A reaper whose host clock runs two hours ahead sees the owner as alive: the
        # database's clock judges.
        real = fence.utcnow
        monkeypatch.setattr(fence, "utcnow", lambda: real() + timedelta(hours=2))
        skewed = WorkerRegistry(db)
        skewed.register()
        assert turns.take_orphans(skewed.worker_id, stale_after=30, limit=100) == []
        monkeypatch.undo()
        owner.retire()  # the owner is gone: eight reapers race for its 40 turns
        taken: list[str] = []
        lock = threading.Lock()

        def reap() -> None:
            reaper = WorkerRegistry(db)
            reaper.register()
            for _ in range(10):
                got = turns.take_orphans(reaper.worker_id, stale_after=30, limit=3)
                with lock:
                    taken.extend(o.turn.turn_id for o in got)

        threads = [threading.Thread(target=reap) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(taken) == len(set(taken)) == 40
    finally:
        db.dispose()


def test_a_message_queued_while_the_running_turn_writes_one_takes_the_next_position(
    pg_url: str,
) -> None:
    """Positions are max + 1 per session: a message queued in a transaction still open must
    not give the running turn's insert the same one (found by the cluster soak)."""
    import threading

    from engine.store.messages import MessageStore
    from engine.store.turns import TurnStore
    from engine.store.workers import WorkerRegistry
    from models import Message
    from models.db import Database

    upgrade(pg_url)
    db = Database(pg_url)
    try:
        user_id, _ = make_user(db, "positions")
        turns, messages, worker = TurnStore(db), MessageStore(db), WorkerRegistry(db)
        worker.register()
        sid = create_session(db, user_id)["id"]
        _, lease, _ = turns.start_turn(user_id, sid, "first", worker.worker_id)
        queued_open, release = threading.Event(), threading.Event()

        def hold_open() -> None:  # the queued message is written; its commit waits
            queued_open.set()
            assert release.wait(10)

        def queue() -> None:
            ask = Ask("second", if_busy="queue")
            turns.start_turn(user_id, sid, ask, worker.worker_id, last_check=hold_open)

        failures: list[BaseException] = []

        def answer() -> None:
            try:
                messages.add_message(lease, "msg_answer", "assistant", [], "streaming")
            except BaseException as err:
                failures.append(err)

        queuer = threading.Thread(target=queue)
        queuer.start()
        assert queued_open.wait(10)
        writer = threading.Thread(target=answer)
        writer.start()
        writer.join(0.5)  # it waits for the open transaction
        release.set()
        queuer.join(10)
        writer.join(10)
        assert failures == []
        with db.read() as s:
            positions = s.scalars(select(Message.position).where(Message.session_id == sid)).all()
        assert sorted(positions) == [0, 1, 2]
    finally:
        db.dispose()

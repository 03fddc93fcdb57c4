"""Stale-turn detection uses the database's clock, not the worker's."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import func, select, update

import engine.store as store_module
from engine.store import TurnStore
from models import Turn
from services.sessions import create_session


def test_a_turn_whose_heartbeat_stopped_is_interrupted_and_a_live_one_is_not(
    db: Any, user: tuple[int, str]
) -> None:
    store = TurnStore(db, stale_after=30)
    dead = store.start_turn(user[0], create_session(db, user[0])["id"], "a")
    alive = store.start_turn(user[0], create_session(db, user[0])["id"], "b")
    with db.transaction() as s:
        past = s.scalar(select(func.now())) - timedelta(seconds=90)
        s.execute(update(Turn).where(Turn.id == dead.turn_id).values(heartbeat_at=past))
    assert store.interrupt_stale() == 1
    with db.read() as s:
        status = dict(s.execute(select(Turn.id, Turn.status)).all())
    assert status == {dead.turn_id: "interrupted", alive.turn_id: "running"}
    assert store.beat(dead.turn_id, 1) is True  # its worker, if alive after all, must stop
    assert store.beat(alive.turn_id, 1) is False


def test_a_worker_with_a_clock_far_ahead_does_not_kill_live_turns(
    db: Any, user: tuple[int, str], monkeypatch: Any
) -> None:
    store = TurnStore(db, stale_after=30)
    turn = store.start_turn(user[0], create_session(db, user[0])["id"], "a")
    real = store_module.utcnow
    monkeypatch.setattr(store_module, "utcnow", lambda: real() + timedelta(hours=2))
    assert store.interrupt_stale() == 0
    assert store.beat(turn.turn_id, 1) is False

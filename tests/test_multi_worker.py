"""Two app processes' worth of workers sharing one database and one Redis event log."""

from __future__ import annotations

import threading
from typing import Any

from demo_data.generator import seed_finance
from models import Turn
from services.sessions import create_session
from streaming.messages.history import validate_history
from tests.backends import redis_or_skip
from tests.conftest import make_user
from tests.helpers import assert_well_formed
from tests.live import LiveServer, decode, events_only
from tests.waits import PATIENCE


def test_a_turn_run_by_one_worker_streams_and_cancels_through_another(
    app_config: dict[str, Any],
) -> None:
    from app import create_app

    config = {
        **app_config,
        "EVENT_LOG_URL": redis_or_skip(),
        "DEMO_EVENT_DELAY": 0.002,
    }
    runner, reader = create_app(config), create_app(config)
    db = runner.extensions["db"]
    user_id, token = make_user(db, "multi")
    live = LiveServer(reader, token)
    try:
        sid = create_session(db, user_id)["id"]
        turn = runner.extensions["turns"].start(user_id, sid, "Am I over budget anywhere?")
        raw = events_only(live.read_events(f"/api/turns/{turn.turn_id}/events"))
        events = decode(raw)
        assert_well_formed(events)
        assert events[-1][2]["status"] == "completed"
        assert runner.extensions["turns"].wait(turn.turn_id)
        archived = runner.extensions["turns"].peek(turn.turn_id, 0).frames
        assert raw == archived

        # Slow enough that the cancel lands mid-turn (this user has no data: short answers);
        # once 3 events are read the model waits an hour per event: only the cancel, which
        # the runner polls with its heartbeat, can end the turn.
        runner.extensions["turns"].deps.model.demo_pace.delay = 0.3
        second = runner.extensions["turns"].start(user_id, sid, "What did I spend on groceries?")
        live.read_events(f"/api/turns/{second.turn_id}/events", max_events=3)
        runner.extensions["turns"].deps.model.demo_pace.delay = 3600
        assert live.post(f"/api/turns/{second.turn_id}/cancel").status_code == 202
        assert runner.extensions["turns"].wait(second.turn_id, timeout=PATIENCE)
        tail = decode(events_only(live.read_events(f"/api/turns/{second.turn_id}/events")))
        assert tail[-1][2]["status"] == "cancelled"
        assert_well_formed(tail)
    finally:
        live.close()
        for app in (runner, reader):
            app.extensions["engine"].close()
            app.extensions["db"].dispose()


def test_a_hung_worker_is_taken_over_and_fenced_out_when_it_wakes(
    app_config: dict[str, Any],
) -> None:
    from app import create_app

    config = {**app_config, "EVENT_LOG_URL": redis_or_skip(), "TIME_SCALE": 0.05}
    config["DEMO_EVENT_DELAY"] = 0.01
    hung, healthy = create_app(config), create_app(config)
    db = hung.extensions["db"]
    user_id, token = make_user(db, "hung")
    seed_finance(db, user_id, months=3, seed=2)
    frozen, wake = threading.Event(), threading.Event()
    events = hung.extensions["turns"].deps.events
    append = events.append

    def freezing_append(turn_id: str, kind: str, data: dict[str, Any], lease: int = 1) -> int:
        seq = append(turn_id, kind, data, lease)
        if seq == 12:  # the whole engine (its loop) stops here: no events, no heartbeat
            frozen.set()
            wake.wait(30)
        return seq

    events.append = freezing_append
    hung.extensions["engine"].workers.beat = lambda: wake.wait(30)
    live = LiveServer(healthy, token)  # the healthy worker's reaper takes the turn over
    try:
        sid = create_session(db, user_id)["id"]
        turn = hung.extensions["turns"].start(user_id, sid, "What did I spend on groceries?")
        assert frozen.wait(10)
        raw = events_only(live.read_events(f"/api/turns/{turn.turn_id}/events"))
        wake.set()  # the hung worker wakes up and carries on as if nothing happened
        assert hung.extensions["turns"].wait(turn.turn_id, timeout=10)
        events_seen = decode(raw)
        assert_well_formed(events_seen)
        assert events_seen[-1][2]["status"] == "completed"
        assert any(
            d.get("reason") == "worker_lost" for _, t, d in events_seen if t == "message_discarded"
        )
        # Whatever the woken worker tried to add changed nothing: closing its engine writes
        # what its log still had queued.
        hung.extensions["engine"].close()
        assert events_only(live.read_events(f"/api/turns/{turn.turn_id}/events")) == raw
        with db.read() as s:
            row = s.get(Turn, turn.turn_id)
        assert (row.status, row.takeovers, row.lease) == ("completed", 1, 2)
        conversation = healthy.extensions["turns"].deps.messages.conversation(sid)
        assert validate_history(conversation, expect_user_last=False) == []
    finally:
        wake.set()
        live.close()
        for app in (hung, healthy):
            app.extensions["engine"].close()
            app.extensions["db"].dispose()

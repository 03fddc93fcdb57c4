"""Two app processes' worth of workers sharing one database and one Redis event log."""

from __future__ import annotations

import time
from typing import Any

from services.sessions import create_session
from tests.conftest import make_user
from tests.helpers import assert_well_formed
from tests.http.conftest import LiveServer, decode, events_only
from tests.test_eventlog import redis_or_skip


def test_a_turn_run_by_one_worker_streams_and_cancels_through_another(
    app_config: dict[str, Any],
) -> None:
    from app import create_app

    config = {
        **app_config,
        "EVENT_LOG_URL": redis_or_skip(),
        "HEARTBEAT_SECONDS": 30,
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
        archived = runner.extensions["turns"].read(turn.turn_id, 0, 0).frames
        assert raw == archived

        runner.config["DEMO_EVENT_DELAY"] = 0.05
        runner.extensions["turns"].deps.model.client._client._transport.event_delay = 0.05
        second = runner.extensions["turns"].start(user_id, sid, "What did I spend on groceries?")
        live.read_events(f"/api/turns/{second.turn_id}/events", max_events=3)
        assert live.post(f"/api/turns/{second.turn_id}/cancel").status_code == 202
        asked = time.monotonic()
        assert runner.extensions["turns"].wait(second.turn_id, timeout=5)
        assert time.monotonic() - asked < 2.5  # polled every second, not at the heartbeat
        tail = decode(events_only(live.read_events(f"/api/turns/{second.turn_id}/events")))
        assert tail[-1][2]["status"] == "cancelled"
        assert_well_formed(tail)
    finally:
        live.close()
        for app in (runner, reader):
            app.extensions["turns"].shutdown()
            app.extensions["db"].dispose()

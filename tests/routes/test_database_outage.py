"""The single-process default (SQLite, the in-process log) through a database outage.

For 20 s (scaled, with every timing, by TIME_SCALE) every statement fails as SQLite fails
on a full disk: requests that need the database get 503 with Retry-After, running turns
wait and then finish `completed` with exactly the answer their clients were shown.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from sqlalchemy import select

from models import Message, Turn
from models.base import utcnow
from services.api_tokens import aware
from streaming.wire.view import view_of
from tests.conftest import make_user
from tests.helpers import assert_well_formed
from tests.live import LiveServer, events_only
from tests.outage import assert_storage_unavailable, failing_statements
from tests.waits import PATIENCE

SCALE = 0.1
QUESTIONS = ["Am I over budget anywhere?", "What did I spend on groceries last month?"]


@pytest.mark.slow  # a real outage of 20 s scaled: 5-7 s, more on a loaded machine
def test_a_20_second_database_outage_loses_nothing(app_config: dict[str, Any]) -> None:
    from app import create_app
    from demo_data.generator import seed_finance

    app = create_app({**app_config, "TIME_SCALE": SCALE, "DEMO_EVENT_DELAY": 0.02})
    db = app.extensions["db"]
    user_id, token = make_user(db, "outage")
    seed_finance(db, user_id, months=3, seed=7)
    live = LiveServer(app, token)
    try:
        turns = [live.start_turn(q) for q in QUESTIONS]
        streams: dict[str, bytes] = {}

        reading = {t["turn_id"]: threading.Event() for t in turns}

        def read(turn: dict[str, Any]) -> None:
            raw = live.read_events(turn["events_url"], reading=reading[turn["turn_id"]])
            streams[turn["turn_id"]] = events_only(raw)

        readers = [threading.Thread(target=read, args=(t,)) for t in turns]
        for reader in readers:
            reader.start()
        for turn in turns:  # both turns stream to their clients
            assert reading[turn["turn_id"]].wait(PATIENCE), "the stream did not start"
        with failing_statements(db.engine) as down:
            down.set()
            went_down = utcnow()
            assert_storage_unavailable(live.post("/api/sessions"))
            assert_storage_unavailable(live.get("/healthz"))
            time.sleep(20 * SCALE)  # the outage lasts this long: the scenario, not a wait
            came_back = utcnow()
            down.clear()
        for reader in readers:
            reader.join(60)
        with db.read() as s:
            for turn in turns:
                row = s.get(Turn, turn["turn_id"])
                assert (row.status, row.error_code) == ("completed", None)
                # The turn ran through the outage.
                assert aware(row.created_at) < went_down and aware(row.finished_at) > came_back
                shown = streams[turn["turn_id"]]
                assert_well_formed(view_events(shown))
                stored = s.scalars(
                    select(Message)
                    .where(Message.turn_id == turn["turn_id"], Message.role == "assistant")
                    .where(Message.status == "complete")
                    .order_by(Message.position)
                ).all()
                text = "".join(b.get("text", "") for m in stored for b in m.content)
                assert text and view_of(shown).shown_text() == text
            assert "streaming" not in s.scalars(select(Message.status)).all()
        assert live.post("/api/sessions").status_code == 201
    finally:
        live.close()
        app.extensions["engine"].close()
        db.dispose()


def view_events(raw: bytes) -> list[tuple[int, str, dict[str, Any]]]:
    """Decoded events of a whole stream."""
    from streaming.wire.protocol import decode_stream

    return decode_stream(raw)

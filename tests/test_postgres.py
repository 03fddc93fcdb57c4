"""The same schema and a whole turn on PostgreSQL (CI requires it: REQUIRE_POSTGRES=1)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import create_engine, text

from engine.errors import TurnConflict
from models.migrate import upgrade
from services.sessions import create_session, get_session
from streaming.history import validate_history
from streaming.protocol import decode_stream
from tests.conftest import make_user
from tests.helpers import assert_well_formed

ADMIN_URL = os.environ.get(
    "TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)


def _reachable() -> bool:
    try:
        with create_engine(ADMIN_URL).connect() as conn:
            conn.execute(text("SELECT 1"))
        return True
    except Exception:
        return False


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A fresh, empty PostgreSQL database, dropped afterwards."""
    if not _reachable():
        if os.environ.get("REQUIRE_POSTGRES") == "1":
            pytest.fail(f"PostgreSQL is required but not reachable at {ADMIN_URL}")
        pytest.skip("PostgreSQL not reachable")
    name = f"chat_test_{uuid.uuid4().hex[:10]}"
    admin = create_engine(ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    yield ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE "{name}" WITH (FORCE)'))
    admin.dispose()


def test_a_demo_turn_runs_and_is_stored_on_postgres(pg_url: str) -> None:
    upgrade(pg_url)
    from app import create_app

    app = create_app({"DATABASE_URL": pg_url, "ANTHROPIC_API_KEY": None, "SECRET_KEY": "s"})
    try:
        db, turns = app.extensions["db"], app.extensions["turns"]
        user_id, _ = make_user(db, "pg")
        from demo_data.finance import seed_finance

        seed_finance(db, user_id, months=3, seed=1)
        sid = create_session(db, user_id)["id"]
        turn = turns.start(user_id, sid, "What did I spend on groceries last month?")
        with pytest.raises(TurnConflict):
            turns.start(user_id, sid, "again")
        assert turns.wait(turn.turn_id)
        events = decode_stream(turns.read(turn.turn_id, 0, 0).frames)
        assert_well_formed(events)
        assert events[-1][2]["status"] == "completed"
        messages = get_session(db, user_id, sid)["messages"]
        history: list[dict[str, Any]] = [
            {"role": m["role"], "content": m["content"]} for m in messages
        ]
        assert validate_history(history, expect_user_last=False) == []
    finally:
        app.extensions["turns"].shutdown()
        app.extensions["db"].dispose()

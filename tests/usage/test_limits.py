"""Per-user limits: turns running at once and tokens per day; 429, Retry-After, nothing written."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import func, select

from domain.errors import LimitExceeded
from engine.limits import Admission, Limits, UserLimits
from engine.store.turns import TurnStore
from models import ChatSession, Message, Turn, UIChat
from models.db import Database
from services.sessions import create_session
from tests.conftest import make_user


def headers(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def rows(db: Database) -> dict[str, int]:
    """How many rows each table a turn start writes holds."""
    with db.read() as s:
        return {
            model.__tablename__: s.scalar(select(func.count()).select_from(model)) or 0
            for model in (ChatSession, Turn, Message, UIChat)
        }


def assert_limited(response: Any, code: str) -> dict[str, Any]:
    assert response.status_code == 429, response.get_data(as_text=True)
    assert int(response.headers["Retry-After"]) >= 1
    error = response.json["error"]
    assert error["code"] == code and error["message"]
    # Every 429 tells when to retry in its body too; the callers compare the rest.
    assert error["details"].pop("retry_after") == int(response.headers["Retry-After"])
    return error


@pytest.fixture
def app_config(app_config: dict[str, Any]) -> dict[str, Any]:
    # Slow enough that a turn is still running while the test starts others.
    return {**app_config, "USER_MAX_CONCURRENT_TURNS": 1, "DEMO_EVENT_DELAY": 0.2}


@pytest.fixture
def running(client: Any, app: Any, user: tuple[int, str]) -> Iterator[str]:
    """Alice's one allowed turn, running; cancelled afterwards."""
    session = client.post("/api/sessions", headers=headers(user[1])).json["id"]
    started = client.post(
        f"/api/sessions/{session}/turns",
        json={"message": "What did I spend on groceries last month?"},
        headers=headers(user[1]),
    )
    assert started.status_code == 202
    turn_id = started.json["turn_id"]
    yield turn_id
    app.extensions["turns"].cancel(turn_id)
    app.extensions["turns"].wait(turn_id, timeout=10)


def test_a_second_running_turn_is_refused_on_every_endpoint_writing_nothing(
    client: Any, app: Any, db: Database, user: tuple[int, str], running: str
) -> None:
    token = user[1]
    other = client.post("/api/sessions", headers=headers(token)).json["id"]
    before = rows(db)
    attempts = [
        client.post(f"/api/sessions/{other}/turns", json={"message": "Hi"}, headers=headers(token)),
        client.post("/api/chat/stream", json={"message": "Hi"}, headers=headers(token)),
        client.post(
            "/api/ui/chat",
            json={
                "id": "chat-1",
                "messages": [{"role": "user", "parts": [{"type": "text", "text": "Hi"}]}],
            },
            headers=headers(token),
        ),
    ]
    for response in attempts:
        error = assert_limited(response, "too_many_turns")
        assert error["details"] == {"limit": 1, "running": 1}
    assert rows(db) == before
    # Another user has turns of their own.
    bob = make_user(db, "bob")
    assert (
        client.post("/api/chat/stream", json={"message": "Hi"}, headers=headers(bob[1])).status_code
        == 200
    )


def test_the_count_holds_across_worker_processes(
    app_config: dict[str, Any], db: Database, user: tuple[int, str], running: str
) -> None:
    from app import create_app

    other_worker = create_app(app_config)
    try:
        response = other_worker.test_client().post(
            "/api/chat/stream", json={"message": "Hi"}, headers=headers(user[1])
        )
        assert_limited(response, "too_many_turns")
    finally:
        other_worker.extensions["engine"].close()
        other_worker.extensions["db"].dispose()


def test_a_place_frees_up_when_a_turn_ends(
    client: Any, app: Any, user: tuple[int, str], running: str
) -> None:
    app.extensions["turns"].cancel(running)
    assert app.extensions["turns"].wait(running, timeout=10)
    response = client.post("/api/chat/stream", json={"message": "Hi"}, headers=headers(user[1]))
    assert response.status_code == 200


def test_starting_a_turn_counts_in_the_same_transaction(
    db: Database, user: tuple[int, str]
) -> None:
    turns = TurnStore(db, Admission(Limits(max_running=2, retry_after=5.0)))
    turns.start_turn(user[0], create_session(db, user[0])["id"], "one")
    turns.start_turn(user[0], create_session(db, user[0])["id"], "two")
    before = rows(db)
    with pytest.raises(LimitExceeded):
        turns.start_turn(user[0], None, "three")
    assert rows(db) == before


def test_the_daily_budget_refuses_the_turn_after_the_one_that_crossed_it(
    app_config: dict[str, Any], db: Database, user: tuple[int, str]
) -> None:
    from app import create_app

    app = create_app({**app_config, "USER_DAILY_TOKENS": 50, "DEMO_EVENT_DELAY": 0.0})
    client = app.test_client()
    try:
        first = client.post("/api/chat/stream", json={"message": "Hi"}, headers=headers(user[1]))
        assert first.status_code == 200
        first.get_data()  # the whole turn
        session = first.headers["X-Session-Id"]
        used = client.get(f"/api/sessions/{session}", headers=headers(user[1])).json["usage"]
        assert used["total_tokens"] >= 50
        before = rows(db)
        second = client.post("/api/chat/stream", json={"message": "Hi"}, headers=headers(user[1]))
        error = assert_limited(second, "daily_token_limit")
        assert error["details"] == {"limit": 50, "used": used["total_tokens"]}
        assert int(second.headers["Retry-After"]) <= 24 * 3600
        assert rows(db) == before
    finally:
        app.extensions["engine"].close()
        app.extensions["db"].dispose()


def test_the_daily_budget_renews_at_midnight_utc(db: Database, user: tuple[int, str]) -> None:
    late = datetime(2026, 3, 1, 23, 59, 30, tzinfo=UTC)
    limits = UserLimits(
        db, Limits(daily_tokens=0, max_running=None, retry_after=5.0), now=lambda: late
    )
    with pytest.raises(LimitExceeded) as caught:
        limits.admit(user[0])
    assert caught.value.retry_after == 30
    unlimited = UserLimits(
        db, Limits(daily_tokens=None, max_running=None, retry_after=5.0), now=lambda: late
    )
    unlimited.admit(user[0])


def test_a_concurrency_refusal_leaves_the_rate_untouched(
    app_config: dict[str, Any], db: Database, user: tuple[int, str]
) -> None:
    from app import create_app

    app = create_app({**app_config, "RATE_LIMIT": "2/minute"})
    client, turns = app.test_client(), app.extensions["turns"]
    try:
        first = client.post("/api/chat/stream", json={"message": "Hi"}, headers=headers(user[1]))
        assert first.status_code == 200  # the one running turn allowed; one start of two used
        for _ in range(5):
            refused = client.post(
                "/api/chat/stream", json={"message": "Hi"}, headers=headers(user[1])
            )
            assert_limited(refused, "too_many_turns")
        turn_id = first.headers["X-Turn-Id"]
        turns.cancel(turn_id)
        assert turns.wait(turn_id, timeout=10)
        second = client.post("/api/chat/stream", json={"message": "Hi"}, headers=headers(user[1]))
        assert second.status_code == 200  # the five refusals used none of the rate
        turns.cancel(second.headers["X-Turn-Id"])
        assert turns.wait(second.headers["X-Turn-Id"], timeout=10)
        third = client.post("/api/chat/stream", json={"message": "Hi"}, headers=headers(user[1]))
        assert_limited(third, "rate_limited")
    finally:
        app.extensions["engine"].close()
        app.extensions["db"].dispose()

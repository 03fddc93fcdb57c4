"""New sessions per user: SESSION_RATE_LIMIT (429) and USER_MAX_SESSIONS (409) on every path
that creates one; a refusal writes nothing and uses up nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import func, select

from domain.errors import Conflict, LimitExceeded
from models import ChatSession, Message, Turn, UIChat
from models.db import Database
from tests.backends import migrated_postgres
from tests.conftest import make_user


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def rows(db: Database, user_id: int) -> tuple[int, int, int, int]:
    """The user's sessions, turns, messages and AI SDK chats."""
    with db.read() as s:
        return (
            s.scalar(select(func.count()).where(ChatSession.user_id == user_id)) or 0,
            s.scalar(select(func.count()).where(Turn.user_id == user_id)) or 0,
            s.scalar(
                select(func.count())
                .select_from(Message)
                .join(ChatSession, ChatSession.id == Message.session_id)
                .where(ChatSession.user_id == user_id)
            )
            or 0,
            s.scalar(select(func.count()).where(UIChat.user_id == user_id)) or 0,
        )


def via_sessions(client: Any, token: str, n: int) -> Any:
    return client.post("/api/sessions", json={"title": f"t{n}"}, headers=bearer(token))


def via_stream(client: Any, token: str, n: int) -> Any:
    response = client.post("/api/chat/stream", json={"message": f"hi {n}"}, headers=bearer(token))
    response.get_data()  # the whole turn
    return response


def via_ui_chat(client: Any, token: str, n: int) -> Any:
    body = {
        "id": f"chat-{n}",
        "messages": [{"role": "user", "parts": [{"type": "text", "text": "x"}]}],
    }
    response = client.post("/api/ui/chat", json=body, headers=bearer(token))
    response.get_data()
    return response


PATHS: dict[str, Callable[[Any, str, int], Any]] = {
    "POST /api/sessions": via_sessions,
    "POST /api/chat/stream": via_stream,
    "POST /api/ui/chat": via_ui_chat,
}
MADE = {"POST /api/sessions": 201, "POST /api/chat/stream": 200, "POST /api/ui/chat": 200}


@pytest.fixture
def rate_config(app_config: dict[str, Any]) -> dict[str, Any]:
    return {**app_config, "SESSION_RATE_LIMIT": "3/minute", "RATE_LIMIT": "off"}


@pytest.fixture
def cap_config(app_config: dict[str, Any]) -> dict[str, Any]:
    return {**app_config, "SESSION_RATE_LIMIT": "off", "USER_MAX_SESSIONS": 2}


def make_app(config: dict[str, Any]) -> Any:
    from app import create_app

    return create_app(config)


@pytest.mark.parametrize("path", PATHS)
def test_new_sessions_over_the_rate_are_429_and_write_nothing(
    rate_config: dict[str, Any], path: str
) -> None:
    app = make_app(rate_config)
    try:
        db, client = app.extensions["db"], app.test_client()
        user_id, token = make_user(db, "alice")
        create = PATHS[path]
        assert [create(client, token, n).status_code for n in range(3)] == [MADE[path]] * 3
        before = rows(db, user_id)
        refused = create(client, token, 3)
        assert refused.status_code == 429, refused.get_data(as_text=True)
        assert 1 <= int(refused.headers["Retry-After"]) <= 60
        error = refused.get_json()["error"]
        assert error["code"] == "rate_limited" and "new chats" in error["message"]
        assert error["details"]["limit"] == 3
        assert rows(db, user_id) == before
        # Another user counts on their own; listing and opening are not limited.
        _, other = make_user(db, "bob")
        assert create(client, other, 9).status_code == MADE[path]
        assert client.get("/api/sessions", headers=bearer(token)).status_code == 200
    finally:
        app.extensions["engine"].close()
        app.extensions["db"].dispose()


@pytest.mark.parametrize("path", PATHS)
def test_sessions_past_the_cap_are_409_and_write_nothing(
    cap_config: dict[str, Any], path: str
) -> None:
    app = make_app(cap_config)
    try:
        db, client = app.extensions["db"], app.test_client()
        user_id, token = make_user(db, "alice")
        create = PATHS[path]
        assert [create(client, token, n).status_code for n in range(2)] == [MADE[path]] * 2
        before = rows(db, user_id)
        refused = create(client, token, 2)
        assert refused.status_code == 409, refused.get_data(as_text=True)
        assert refused.get_json()["error"]["code"] == "too_many_sessions"
        assert rows(db, user_id) == before
        # A turn on a session the user has is no new session.
        sid = client.get("/api/sessions", headers=bearer(token)).get_json()["sessions"][0]["id"]
        turn = client.post(
            f"/api/sessions/{sid}/turns", json={"message": "again"}, headers=bearer(token)
        )
        assert turn.status_code == 202
        # Deleting one makes room for one.
        assert client.delete(f"/api/sessions/{sid}", headers=bearer(token)).status_code == 204
        assert create(client, token, 3).status_code == MADE[path]
    finally:
        app.extensions["engine"].close()
        app.extensions["db"].dispose()


def check_turn_store(config: dict[str, Any]) -> None:
    """`TurnStore.start_turn` without a session: the same limits, the same nothing written."""
    app = make_app(config)
    try:
        db = app.extensions["db"]
        turns = app.extensions["engine"].deps.turns
        user_id, _ = make_user(db, "alice")
        for n in range(2):
            turns.start_turn(user_id, None, f"question {n}")
        before = rows(db, user_id)
        with pytest.raises((LimitExceeded, Conflict)):
            turns.start_turn(user_id, None, "one more")
        assert rows(db, user_id) == before
    finally:
        app.extensions["engine"].close()
        app.extensions["db"].dispose()


def test_the_turn_store_keeps_the_rate(app_config: dict[str, Any]) -> None:
    check_turn_store({**app_config, "SESSION_RATE_LIMIT": "2/minute"})


def test_the_turn_store_keeps_the_cap(app_config: dict[str, Any]) -> None:
    check_turn_store({**app_config, "USER_MAX_SESSIONS": 2})


def test_the_cap_holds_on_postgres(app_config: dict[str, Any]) -> None:

    with migrated_postgres() as url:
        check_turn_store({**app_config, "DATABASE_URL": url, "USER_MAX_SESSIONS": 2})

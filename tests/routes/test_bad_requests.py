"""Bad input gets a clear 4xx in the one JSON error shape, and nothing is written."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from sqlalchemy import func, select

from models import ChatSession, Message, Turn

# One app for the module's tests, its database emptied after each (tests/conftest.py).
pytestmark = pytest.mark.shared_app


def counts(app: Any) -> tuple[int, int, int]:
    """Rows in sessions, turns and messages."""
    with app.extensions["db"].transaction() as s:
        return tuple(
            s.scalar(select(func.count()).select_from(m))  # type: ignore[return-value]
            for m in (ChatSession, Turn, Message)
        )


@pytest.fixture
def auth(user: tuple[int, str]) -> dict[str, str]:
    return {"Authorization": f"Bearer {user[1]}"}


@pytest.fixture
def session_id(client: Any, auth: dict[str, str]) -> str:
    return client.post("/api/sessions", headers=auth).get_json()["id"]


BAD_BODIES = [
    ("malformed json", b'{"message": ', "application/json", 400, "invalid_json"),
    ("not an object", b'["hi"]', "application/json", 422, "validation_error"),
    ("missing message", b"{}", "application/json", 422, "validation_error"),
    ("empty message", b'{"message": ""}', "application/json", 422, "validation_error"),
    ("blank message", b'{"message": "  \\n "}', "application/json", 422, "validation_error"),
    ("wrong type", b'{"message": 42}', "application/json", 422, "validation_error"),
    ("null message", b'{"message": null}', "application/json", 422, "validation_error"),
    (
        "unknown field",
        b'{"message": "hi", "role": "system"}',
        "application/json",
        422,
        "validation_error",
    ),
    (
        "deeply nested",
        b'{"message": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        "application/json",
        400,
        "invalid_json",
    ),
    ("invalid utf-8", b'{"message": "\xff\xfe"}', "application/json", 400, "invalid_json"),
    ("nul character", b'{"message": "a\\u0000b"}', "application/json", 422, "validation_error"),
    ("lone surrogate", b'{"message": "a\\ud800b"}', "application/json", 422, "validation_error"),
    (
        "form body",
        b"message=hi",
        "application/x-www-form-urlencoded",
        415,
        "unsupported_media_type",
    ),
    (
        "too long",
        b'{"message": "' + b"x" * 16_001 + b'"}',
        "application/json",
        413,
        "message_too_large",
    ),
    (
        "body too large",
        b'{"message": "' + b"x" * 300_000 + b'"}',
        "application/json",
        413,
        "request_entity_too_large",
    ),
]


@pytest.mark.parametrize(
    ("name", "body", "ctype", "status", "code"), BAD_BODIES, ids=[b[0] for b in BAD_BODIES]
)
@pytest.mark.parametrize("path", ["turns", "chat"])
def test_bad_message_bodies_are_rejected_and_write_nothing(
    app: Any,
    client: Any,
    auth: dict[str, str],
    session_id: str,
    path: str,
    name: str,
    body: bytes,
    ctype: str,
    status: int,
    code: str,
) -> None:
    before = counts(app)
    url = f"/api/sessions/{session_id}/turns" if path == "turns" else "/api/chat/stream"
    response = client.post(url, data=body, headers={**auth, "Content-Type": ctype})
    assert response.status_code == status, response.get_json()
    error = response.get_json()["error"]
    assert error["code"] == code and error["message"]
    assert isinstance(error["details"], dict)
    if status == 422 and name in ("missing message", "empty message", "wrong type"):
        assert "message" in error["details"]
    assert counts(app) == before


@pytest.mark.parametrize("header", [None, "Bearer", "Bearer nope", "Basic abc", "bearer "])
def test_missing_or_wrong_tokens_are_401(client: Any, header: str | None) -> None:
    headers = {"Authorization": header} if header is not None else {}
    response = client.get("/api/sessions", headers=headers)
    assert response.status_code == 401
    assert response.get_json()["error"]["code"] == "unauthorized"


def test_unknown_ids_and_routes_are_404_json(client: Any, auth: dict[str, str]) -> None:
    for method, path in [
        ("GET", "/api/sessions/ses_nope"),
        ("DELETE", "/api/sessions/ses_nope"),
        ("GET", "/api/turns/turn_nope"),
        ("POST", "/api/turns/turn_nope/cancel"),
        ("GET", "/api/turns/turn_nope/events"),
        ("GET", "/api/nothing"),
    ]:
        response = client.open(path, method=method, headers=auth)
        assert response.status_code == 404, path
        assert response.get_json()["error"]["code"] == "not_found"


def test_turn_on_a_missing_session_is_404_and_writes_nothing(
    app: Any, client: Any, auth: dict[str, str]
) -> None:
    before = counts(app)
    response = client.post("/api/sessions/ses_nope/turns", json={"message": "hi"}, headers=auth)
    assert response.status_code == 404
    response = client.post(
        "/api/chat/stream", json={"message": "hi", "session_id": "ses_nope"}, headers=auth
    )
    assert response.status_code == 404
    assert counts(app) == before


def test_wrong_method_is_405_json(client: Any, auth: dict[str, str]) -> None:
    response = client.put("/api/sessions", headers=auth)
    assert response.status_code == 405
    assert response.get_json()["error"]["code"] == "method_not_allowed"


@pytest.mark.parametrize("value", ["abc", "-1", "1.5", "1_0", " 1", "1" * 19, "\uff11"])
def test_bad_last_event_id_is_422(
    client: Any, auth: dict[str, str], session_id: str, value: str
) -> None:
    turn = client.post(
        f"/api/sessions/{session_id}/turns", json={"message": "hi"}, headers=auth
    ).get_json()
    response = client.get(
        f"/api/turns/{turn['turn_id']}/events", headers={**auth, "Last-Event-ID": value}
    )
    assert response.status_code == 422
    error = response.get_json()["error"]
    assert error["code"] == "validation_error" and "Last-Event-ID" in error["details"]
    app_turns = client.application.extensions["turns"]
    assert app_turns.wait(turn["turn_id"])


def test_bad_events_tokens_are_401(client: Any, auth: dict[str, str], session_id: str) -> None:
    turn = client.post(
        f"/api/sessions/{session_id}/turns", json={"message": "hi"}, headers=auth
    ).get_json()
    url = f"/api/turns/{turn['turn_id']}/events"
    assert client.get(f"{url}?token=garbage").status_code == 401
    settings = client.application.config["SETTINGS"]
    timings = replace(settings.timings, events_token_max_age=-1)
    client.application.config["SETTINGS"] = replace(settings, timings=timings)
    expired = client.get(turn["events_url"])
    assert expired.status_code == 401
    assert expired.get_json()["error"]["code"] == "token_expired"
    assert client.application.extensions["turns"].wait(turn["turn_id"])


def test_bad_session_title_is_422(client: Any, auth: dict[str, str]) -> None:
    response = client.post("/api/sessions", json={"title": "x" * 201}, headers=auth)
    assert response.status_code == 422
    assert "title" in response.get_json()["error"]["details"]


@pytest.mark.parametrize(
    ("query", "repeated"),
    [
        ("limit=5&limit=6", "limit"),
        ("limit=5&limit=5", "limit"),
        ("cursor=1&cursor=2&limit=3", "cursor"),
        ("limit=5&nope=1&nope=2", "nope"),
    ],
)
def test_a_repeated_query_parameter_is_422(
    client: Any, auth: dict[str, str], session_id: str, query: str, repeated: str
) -> None:
    for path in ("/api/sessions", f"/api/sessions/{session_id}/messages"):
        response = client.get(f"{path}?{query}", headers=auth)
        assert response.status_code == 422, response.get_data(as_text=True)
        error = response.get_json()["error"]
        assert error["code"] == "validation_error"
        assert "Given more than once." in error["details"][repeated]


def test_a_repeated_events_token_is_422(client: Any, auth: dict[str, str], session_id: str) -> None:
    turn = client.post(
        f"/api/sessions/{session_id}/turns", json={"message": "hi"}, headers=auth
    ).get_json()
    events_url = turn["events_url"]
    token = events_url.split("token=")[1]
    response = client.get(f"{events_url}&token={token}")
    assert response.status_code == 422
    assert response.get_json()["error"]["details"] == {"token": ["Given more than once."]}
    assert client.get(events_url).status_code == 200
    assert client.application.extensions["turns"].wait(turn["turn_id"])

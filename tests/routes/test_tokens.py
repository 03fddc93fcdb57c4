"""The tokens API: list, create (named, expiring), revoke; only the owner's tokens."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select, update

from models import ApiToken
from services import api_tokens
from tests.conftest import make_user

# One app for the module's tests, its database emptied after each (tests/conftest.py).
pytestmark = pytest.mark.shared_app


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def auth(user: tuple[int, str]) -> dict[str, str]:
    return bearer(user[1])


def test_create_shows_the_secret_once_and_it_works(client: Any, auth: dict[str, str]) -> None:
    response = client.post("/api/tokens", json={"name": "web app"}, headers=auth)
    assert response.status_code == 201
    body = response.get_json()
    assert body["name"] == "web app" and body["expires_at"] is None
    assert body["token"].startswith("cbt_") and body["current"] is False
    listed = client.get("/api/tokens", headers=bearer(body["token"])).get_json()["tokens"]
    assert [t["name"] for t in listed] == ["web app", "token"]
    assert all("token" not in t and "token_hash" not in t for t in listed)
    assert [t["current"] for t in listed] == [True, False]
    assert listed[0]["last_used_at"] is not None


def test_expiry_by_seconds_or_date(client: Any, auth: dict[str, str]) -> None:
    soon = client.post("/api/tokens", json={"name": "a", "expires_in": 3600}, headers=auth)
    expires = datetime.fromisoformat(soon.get_json()["expires_at"])
    assert timedelta(minutes=59) < expires - datetime.now(UTC) <= timedelta(hours=1)
    when = (datetime.now(UTC) + timedelta(days=2)).replace(microsecond=0)
    dated = client.post(
        "/api/tokens", json={"name": "b", "expires_at": when.isoformat()}, headers=auth
    )
    assert datetime.fromisoformat(dated.get_json()["expires_at"]) == when


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "name"),
        ({"name": "  "}, "name"),
        ({"name": "x" * 101}, "name"),
        ({"name": 5}, "name"),
        ({"name": "a", "expires_in": 10}, "expires_in"),
        ({"name": "a", "expires_in": "60"}, "expires_in"),
        ({"name": "a", "expires_at": "2020-01-01T00:00:00+00:00"}, "expires_at"),
        ({"name": "a", "expires_at": "2999-01-01T00:00:00"}, "expires_at"),
        ({"name": "a", "expires_in": 60, "expires_at": "2030-01-01T00:00:00Z"}, "_schema"),
        ({"name": "a", "scope": "admin"}, "scope"),
    ],
)
def test_bad_bodies_are_422_in_the_error_shape(
    client: Any, auth: dict[str, str], body: dict[str, Any], field: str
) -> None:
    response = client.post("/api/tokens", json=body, headers=auth)
    assert response.status_code == 422
    error = response.get_json()["error"]
    assert error["code"] == "validation_error" and field in error["details"]
    assert len(client.get("/api/tokens", headers=auth).get_json()["tokens"]) == 1


def test_revoked_token_is_refused_at_once(client: Any, auth: dict[str, str]) -> None:
    made = client.post("/api/tokens", json={"name": "temp"}, headers=auth).get_json()
    assert client.delete(f"/api/tokens/{made['id']}", headers=auth).status_code == 204
    refused = client.get("/api/sessions", headers=bearer(made["token"]))
    assert refused.status_code == 401
    assert refused.get_json()["error"]["code"] == "token_revoked"
    assert [t["name"] for t in client.get("/api/tokens", headers=auth).get_json()["tokens"]] == [
        "token"
    ]
    again = client.delete(f"/api/tokens/{made['id']}", headers=auth)
    assert again.status_code == 404 and again.get_json()["error"]["code"] == "not_found"


def test_a_token_can_revoke_itself(client: Any, auth: dict[str, str]) -> None:
    mine = client.get("/api/tokens", headers=auth).get_json()["tokens"][0]
    assert client.delete(f"/api/tokens/{mine['id']}", headers=auth).status_code == 204
    assert client.get("/api/tokens", headers=auth).status_code == 401


def test_expired_token_is_refused(client: Any, app: Any, auth: dict[str, str]) -> None:
    made = client.post("/api/tokens", json={"name": "e", "expires_in": 60}, headers=auth)
    token_id = made.get_json()["id"]
    with app.extensions["db"].transaction() as s:
        past = datetime.now(UTC) - timedelta(seconds=1)
        s.execute(update(ApiToken).where(ApiToken.id == token_id).values(expires_at=past))
    refused = client.get("/api/sessions", headers=bearer(made.get_json()["token"]))
    assert refused.status_code == 401
    assert refused.get_json()["error"]["code"] == "token_expired"
    listed = client.get("/api/tokens", headers=auth).get_json()["tokens"]
    assert [t["expired"] for t in listed] == [True, False]


def test_another_users_tokens_are_invisible(client: Any, app: Any, auth: dict[str, str]) -> None:
    _, bob = make_user(app.extensions["db"], "bob")
    bobs = client.get("/api/tokens", headers=bearer(bob)).get_json()["tokens"]
    mine = client.get("/api/tokens", headers=auth).get_json()["tokens"]
    assert len(bobs) == len(mine) == 1 and bobs[0]["id"] != mine[0]["id"]
    response = client.delete(f"/api/tokens/{bobs[0]['id']}", headers=auth)
    assert response.status_code == 404
    assert client.get("/api/tokens", headers=bearer(bob)).status_code == 200
    assert client.delete("/api/tokens/nope", headers=auth).status_code == 404


def test_unknown_or_missing_token_is_401(client: Any) -> None:
    assert client.get("/api/tokens").status_code == 401
    response = client.get("/api/tokens", headers=bearer("cbt_nope"))
    assert response.status_code == 401 and response.get_json()["error"]["code"] == "unauthorized"


def test_a_user_holds_a_bounded_number_of_tokens(
    client: Any, auth: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(api_tokens, "MAX_ACTIVE_TOKENS", 2)
    assert client.post("/api/tokens", json={"name": "2"}, headers=auth).status_code == 201
    response = client.post("/api/tokens", json={"name": "3"}, headers=auth)
    assert response.status_code == 409
    assert response.get_json()["error"]["code"] == "too_many_tokens"


def test_last_used_is_written_at_most_once_a_minute(app: Any, user: tuple[int, str]) -> None:
    db = app.extensions["db"]
    first = api_tokens.authenticate(db, user[1])
    with db.read() as s:
        stamp = s.scalar(select(ApiToken.last_used_at).where(ApiToken.id == first.token_id))
    api_tokens.authenticate(db, user[1])
    with db.read() as s:
        assert s.scalar(select(ApiToken.last_used_at)) == stamp

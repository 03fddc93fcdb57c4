"""RATE_LIMIT: turn starts per user, any token; 429 with Retry-After; refusals count nothing."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from config import Settings
from domain.errors import LimitExceeded
from engine.ratelimit import RateLimiter, user_key
from tests.backends import redis_or_skip


@pytest.fixture
def app_config(app_config: dict[str, Any]) -> dict[str, Any]:
    return {**app_config, "RATE_LIMIT": "3/minute", "USER_MAX_CONCURRENT_TURNS": 0}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def start(client: Any, token: str) -> Any:
    sid = client.post("/api/sessions", headers=bearer(token)).get_json()["id"]
    return client.post(f"/api/sessions/{sid}/turns", json={"message": "hi"}, headers=bearer(token))


def assert_rate_limited(response: Any) -> dict[str, Any]:
    assert response.status_code == 429, response.get_data(as_text=True)
    wait = int(response.headers["Retry-After"])
    assert 1 <= wait <= 60
    error = response.get_json()["error"]
    assert error["code"] == "rate_limited" and "3 per minute per user" in error["message"]
    assert error["details"] == {"limit": 3, "window_seconds": 60, "retry_after": wait}
    return error


def test_turns_over_the_limit_get_429_with_retry_after_on_every_start_route(
    client: Any, user: tuple[int, str]
) -> None:
    assert [start(client, user[1]).status_code for _ in range(3)] == [202, 202, 202]
    assert_rate_limited(start(client, user[1]))
    stream = client.post("/api/chat/stream", json={"message": "hi"}, headers=bearer(user[1]))
    assert_rate_limited(stream)
    ui = client.post(
        "/api/ui/chat",
        json={"id": "c1", "messages": [{"role": "user", "parts": [{"type": "text", "text": "x"}]}]},
        headers=bearer(user[1]),
    )
    assert_rate_limited(ui)
    # Other routes are not limited.
    assert client.get("/api/sessions", headers=bearer(user[1])).status_code == 200


def test_ten_tokens_of_one_user_share_the_users_rate(
    client: Any, user: tuple[int, str], make_token: Any
) -> None:
    tokens = [user[1]] + [make_token(f"t{n}") for n in range(9)]
    codes = [start(client, token).status_code for token in tokens for _ in range(2)]
    assert codes.count(202) == 3 and codes.count(429) == 17
    assert codes[:3] == [202, 202, 202]


def test_another_user_counts_on_its_own(client: Any, db: Any, user: tuple[int, str]) -> None:
    from tests.conftest import make_user

    for _ in range(3):
        assert start(client, user[1]).status_code == 202
    assert start(client, user[1]).status_code == 429
    bob = make_user(db, "bob")
    assert start(client, bob[1]).status_code == 202


def test_refusals_for_other_reasons_use_up_no_starts(client: Any, user: tuple[int, str]) -> None:
    headers = bearer(user[1])
    # A missing session and an invalid body are refused before anything counts.
    missing = client.post("/api/sessions/ses_nope/turns", json={"message": "hi"}, headers=headers)
    assert missing.status_code == 404
    assert client.post("/api/chat/stream", json={}, headers=headers).status_code == 422
    assert [start(client, user[1]).status_code for _ in range(3)] == [202, 202, 202]
    assert start(client, user[1]).status_code == 429


@pytest.fixture
def make_token(client: Any, user: tuple[int, str]) -> Any:
    def make(name: str) -> str:
        made = client.post("/api/tokens", json={"name": name}, headers=bearer(user[1]))
        assert made.status_code == 201, made.get_data(as_text=True)
        return str(made.get_json()["token"])

    return make


def test_off_means_no_limit() -> None:
    limiter = RateLimiter("off", "memory://")
    for _ in range(100):
        limiter.test("user:1")
        limiter.hit("user:1")


def test_several_limits_and_the_tightest_refuses() -> None:
    limiter = RateLimiter("1/second;100/hour", "memory://")
    limiter.hit("user:1")
    with pytest.raises(LimitExceeded) as refused:
        limiter.hit("user:1")
    assert refused.value.retry_after == 1 and refused.value.details["limit"] == 1
    limiter.hit("user:2")


def test_a_test_counts_nothing() -> None:
    limiter = RateLimiter("2/minute", "memory://")
    for _ in range(10):
        limiter.test(user_key(1))
    limiter.hit(user_key(1))
    limiter.hit(user_key(1))
    with pytest.raises(LimitExceeded):
        limiter.test(user_key(1))


def test_storage_follows_the_event_log() -> None:
    def storage_url(env: dict[str, str]) -> str:
        return Settings.from_env(env).rate_limit_storage_url

    assert storage_url({"EVENT_LOG_URL": "memory://"}) == "memory://"
    assert storage_url({"EVENT_LOG_URL": "redis://h:6379/0"}) == "redis://h:6379/0"
    assert storage_url({"RATE_LIMIT_STORAGE_URL": "memory://", "EVENT_LOG_URL": "redis://h"}) == (
        "memory://"
    )


def test_workers_share_counts_through_redis() -> None:
    url = redis_or_skip()
    first, second = RateLimiter("3/minute", url), RateLimiter("3/minute", url)
    key = f"test:{uuid.uuid4().hex}"
    first.hit(key)
    second.hit(key)
    first.test(key)
    first.hit(key)
    with pytest.raises(LimitExceeded):
        second.test(key)
    with pytest.raises(LimitExceeded):
        second.hit(key)
    second.clear(key)


def test_a_store_outage_lets_requests_through() -> None:
    limiter = RateLimiter("1/minute", "redis://127.0.0.1:1/0")
    limiter.test("user:1")
    limiter.hit("user:1")
    limiter.hit("user:1")

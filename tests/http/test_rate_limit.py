"""RATE_LIMIT: turns per token, 429 in the one error shape with Retry-After, shared via Redis."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from engine.errors import LimitExceeded
from routes.ratelimit import RateLimiter, storage_url
from tests.backends import redis_or_skip


@pytest.fixture
def app_config(app_config: dict[str, Any]) -> dict[str, Any]:
    return {**app_config, "RATE_LIMIT": "2/minute"}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def start(client: Any, token: str) -> Any:
    sid = client.post("/api/sessions", headers=bearer(token)).get_json()["id"]
    return client.post(f"/api/sessions/{sid}/turns", json={"message": "hi"}, headers=bearer(token))


def test_turns_over_the_limit_get_429_with_retry_after(
    client: Any, app: Any, user: tuple[int, str]
) -> None:
    assert [start(client, user[1]).status_code for _ in range(2)] == [202, 202]
    refused = start(client, user[1])
    assert refused.status_code == 429
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    error = refused.get_json()["error"]
    assert error["code"] == "rate_limited" and "2 per minute" in error["message"]
    assert error["details"]["limit"] == 2 and error["details"]["window_seconds"] == 60
    stream = client.post("/api/chat/stream", json={"message": "hi"}, headers=bearer(user[1]))
    assert stream.status_code == 429
    ui = client.post("/api/ui/chat", json={"id": "c1", "messages": []}, headers=bearer(user[1]))
    assert ui.status_code == 429 and ui.headers["Retry-After"]
    # Other routes are not limited, and another token of the same user counts on its own.
    assert client.get("/api/sessions", headers=bearer(user[1])).status_code == 200
    other = client.post("/api/tokens", json={"name": "b"}, headers=bearer(user[1])).get_json()
    assert start(client, other["token"]).status_code == 202


def test_off_means_no_limit() -> None:
    limiter = RateLimiter("off", "memory://")
    for _ in range(100):
        limiter.check("token:1")


def test_several_limits_and_the_tightest_refuses() -> None:
    limiter = RateLimiter("1/second;100/hour", "memory://")
    limiter.check("token:1")
    with pytest.raises(LimitExceeded) as refused:
        limiter.check("token:1")
    assert refused.value.retry_after == 1 and refused.value.details["limit"] == 1
    limiter.check("token:2")


def test_storage_follows_the_event_log() -> None:
    assert storage_url({"EVENT_LOG_URL": "memory://"}) == "memory://"
    assert storage_url({"EVENT_LOG_URL": "redis://h:6379/0"}) == "redis://h:6379/0"
    assert storage_url({"RATE_LIMIT_STORAGE_URL": "memory://", "EVENT_LOG_URL": "redis://h"}) == (
        "memory://"
    )


def test_workers_share_counts_through_redis() -> None:
    url = redis_or_skip()
    first, second = RateLimiter("3/minute", url), RateLimiter("3/minute", url)
    key = f"test:{uuid.uuid4().hex}"
    first.check(key)
    second.check(key)
    first.check(key)
    with pytest.raises(LimitExceeded):
        second.check(key)
    for item in second.items:
        second.strategy.clear(item, "turns", key)


def test_a_store_outage_lets_requests_through() -> None:
    limiter = RateLimiter("1/minute", "redis://127.0.0.1:1/0")
    limiter.check("token:1")
    limiter.check("token:1")

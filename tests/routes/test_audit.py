"""The audit trail: token creation and revocation and limit refusals as JSON lines, queryable."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from telemetry import audit


class Lines(logging.Handler):
    """Keeps every audit line written while installed."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())

    def records(self, event: str) -> list[dict[str, Any]]:
        return list(audit.query(self.lines, event=event))


@pytest.fixture
def trail() -> Iterator[Lines]:
    handler = Lines()
    level = audit.AUDIT.level
    audit.AUDIT.addHandler(handler)
    audit.AUDIT.setLevel(logging.INFO)
    yield handler
    audit.AUDIT.removeHandler(handler)
    audit.AUDIT.setLevel(level)


@pytest.fixture
def app_config(app_config: dict[str, Any]) -> dict[str, Any]:
    return {**app_config, "RATE_LIMIT": "1/minute"}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_tokens_and_refusals_are_audited_without_secrets(
    client: Any, user: tuple[int, str], trail: Lines
) -> None:
    made = client.post("/api/tokens", json={"name": "ci"}, headers=bearer(user[1])).get_json()
    assert client.delete(f"/api/tokens/{made['id']}", headers=bearer(user[1])).status_code == 204
    for _ in range(2):
        client.post("/api/chat/stream", json={"message": "hi"}, headers=bearer(user[1]))
    [created] = trail.records("token_created")
    assert created["user_id"] == user[0] and created["token_id"] == made["id"]
    assert created["name"] == "ci" and created["route"] == "/api/tokens"
    assert created["by_token_id"] != made["id"]
    [revoked] = trail.records("token_revoked")
    assert revoked["token_id"] == made["id"] and revoked["user_id"] == user[0]
    [refused] = trail.records("limit_refused")
    assert refused["limit"] == "rate_limited" and refused["user_id"] == user[0]
    assert refused["retry_after"] >= 1 and refused["route"] == "/api/chat/stream"
    assert all(made["token"] not in line and user[1] not in line for line in trail.lines)
    assert all(datetime.fromisoformat(json.loads(line)["ts"]).tzinfo for line in trail.lines)


def test_query_filters_by_event_user_and_time(tmp_path: Path) -> None:
    now = datetime.now(UTC)
    lines = [
        json.dumps({"ts": (now - timedelta(days=2)).isoformat(), "event": "a", "user_id": 1}),
        json.dumps({"ts": now.isoformat(), "event": "a", "user_id": 2}),
        json.dumps({"ts": now.isoformat(), "event": "b", "user_id": 1}),
        "not json",
        json.dumps({"ts": now.isoformat(), "user_id": 1}),
    ]
    assert [r["user_id"] for r in audit.query(lines, event="a")] == [1, 2]
    assert [r["event"] for r in audit.query(lines, user_id=1)] == ["a", "b"]
    recent = audit.query(lines, since=now - timedelta(hours=1))
    assert [(r["event"], r["user_id"]) for r in recent] == [("a", 2), ("b", 1)]


def test_the_cli_prints_matching_records(app: Any, tmp_path: Path) -> None:
    path = tmp_path / "audit.log"
    path.write_text(
        json.dumps({"ts": "2026-01-01T00:00:00+00:00", "event": "token_revoked", "user_id": 3})
        + "\n"
        + json.dumps({"ts": "2026-01-02T00:00:00+00:00", "event": "limit_refused", "user_id": 3})
        + "\n"
    )
    result = app.test_cli_runner().invoke(
        args=["audit", "--file", str(path), "--event", "limit_refused", "--user", "3"]
    )
    assert result.exit_code == 0, result.output
    assert [json.loads(line)["event"] for line in result.output.splitlines()] == ["limit_refused"]

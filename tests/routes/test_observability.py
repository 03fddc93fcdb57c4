"""The access log's JSON lines and the Prometheus metrics, on the live server and in Flask."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import REGISTRY

from telemetry.access import ACCESS
from tests.live import LiveServer, decode
from tests.waits import wait_until

ROOT = Path(__file__).resolve().parents[2]


class Lines(logging.Handler):
    """Collects the access log's lines as parsed JSON."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[dict[str, Any]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(json.loads(record.getMessage()))


@pytest.fixture
def access_lines() -> Iterator[list[dict[str, Any]]]:
    handler = Lines()
    ACCESS.addHandler(handler)
    yield handler.lines
    ACCESS.removeHandler(handler)


def line_where(lines: list[dict[str, Any]], **match: Any) -> dict[str, Any]:
    """The first line with these values; the front writes it just after the response."""

    def found() -> dict[str, Any] | None:
        return next((line for line in list(lines) if match.items() <= line.items()), None)

    return wait_until(found, message=f"no access line with {match} in {lines}")


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def test_every_request_gets_one_json_line(
    live: LiveServer, user: tuple[int, str], access_lines: list[dict[str, Any]]
) -> None:
    session = live.post("/api/sessions").json()
    live.get(f"/api/sessions/{session['id']}")
    live.get("/api/sessions/nope")
    live.http.get("/no/such/path")
    shown = line_where(access_lines, path="/api/sessions/<session_id>", status=200)
    assert shown["method"] == "GET" and shown["user_id"] == user[0]
    assert shown["turn_id"] is None and "stream" not in shown
    assert isinstance(shown["duration_ms"], float)
    line_where(access_lines, path="/api/sessions/<session_id>", status=404)
    unmatched = line_where(access_lines, path="/no/such/path")
    assert unmatched["status"] == 404 and unmatched["user_id"] is None
    # Refused by the front before Flask sees it: the raw path, and the front's status.
    live.post("/api/chat/stream", content=b"x" * (live.app.config["MAX_CONTENT_LENGTH"] + 1))
    assert line_where(access_lines, path="/api/chat/stream")["status"] == 413


def test_a_stream_is_logged_when_it_ends_with_its_turn(
    live: LiveServer, user: tuple[int, str], access_lines: list[dict[str, Any]]
) -> None:
    turn = live.start_turn("Am I over budget anywhere?")
    created = line_where(access_lines, status=202)
    assert created["path"] == "/api/sessions/<session_id>/turns"
    assert created["turn_id"] == turn["turn_id"]
    raw = live.read_events(f"/api/turns/{turn['turn_id']}/events")
    assert decode(raw)[-1][1] == "turn_end"
    stream = line_where(access_lines, stream=True)
    assert stream["path"] == "/api/turns/<turn_id>/events"
    assert stream["turn_id"] == turn["turn_id"] and stream["user_id"] == user[0]
    assert stream["status"] == 200


def test_metrics_count_turns_events_tools_and_requests(client: Any, user: tuple[int, str]) -> None:
    before = {
        "completed": sample("chat_turns_finished_total", status="completed"),
        "events": sample("chat_events_published_total"),
        "tools": sample("chat_tool_runs_total", tool="get_budget_status"),
        "requests": sample(
            "http_request_duration_seconds_count",
            method="POST",
            route="/api/chat/stream",
            status="200",
        ),
    }
    headers = {"Authorization": f"Bearer {user[1]}"}
    response = client.post(
        "/api/chat/stream", json={"message": "Am I over budget anywhere?"}, headers=headers
    )
    events = decode(response.get_data())
    assert events[-1][2]["status"] == "completed"
    assert sample("chat_turns_finished_total", status="completed") == before["completed"] + 1
    assert sample("chat_events_published_total") == before["events"] + len(events)
    assert sample("chat_tool_runs_total", tool="get_budget_status") > before["tools"]
    assert (
        sample(
            "http_request_duration_seconds_count",
            method="POST",
            route="/api/chat/stream",
            status="200",
        )
        == before["requests"] + 1
    )
    assert sample("chat_turns_active") == 0
    exposed = client.get("/metrics")
    assert exposed.status_code == 200 and exposed.mimetype == "text/plain"
    text = exposed.get_data(as_text=True)
    for name in (
        "chat_turns_active",
        "chat_streams_active",
        "chat_events_published_total",
        "chat_upstream_retries_total",
        "chat_tool_errors_total",
        "chat_turn_duration_seconds_bucket",
        "chat_stream_duration_seconds_bucket",
    ):
        assert name in text


def test_metrics_token_guards_metrics_when_set(app: Any, client: Any) -> None:
    app.config["SETTINGS"] = replace(app.config["SETTINGS"], metrics_token="m-secret")
    refused = client.get("/metrics")
    assert refused.status_code == 401 and refused.get_json()["error"]["code"] == "unauthorized"
    assert client.get("/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert client.get("/metrics", headers={"Authorization": "Bearer m-secret"}).status_code == 200


WORKER = """
import sys
import time
from telemetry.metrics import EVENTS, TURNS_ACTIVE
EVENTS.inc(int(sys.argv[1]))
TURNS_ACTIVE.inc()
"""


def test_workers_metrics_add_up_and_dead_workers_gauges_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    for count in (2, 3):
        subprocess.run([sys.executable, "-c", WORKER, str(count)], env=env, check=True)
    files = sorted(tmp_path.glob("gauge_livesum_*.db"))
    assert len(files) == 2
    dead_pid = int(files[0].stem.rsplit("_", 1)[1])
    # Loading the settings readies (empties) a master's metrics folder: another one here.
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path / "master"))
    conf: dict[str, Any] = {}
    exec((ROOT / "gunicorn.conf.py").read_text(), conf)
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    conf["child_exit"](None, type("W", (), {"pid": dead_pid})())
    script = "from telemetry.metrics import render; print(render()[0].decode())"
    text = subprocess.run(
        [sys.executable, "-c", script], env=env, check=True, capture_output=True, text=True
    ).stdout
    values = {
        line.split()[0]: float(line.split()[1])
        for line in text.splitlines()
        if line and not line.startswith("#")
    }
    assert values["chat_events_published_total"] == 5
    assert values["chat_turns_active"] == 1

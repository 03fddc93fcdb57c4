"""Approvals and queued messages across worker deaths: nothing lost, no tool run twice."""

from __future__ import annotations

import signal
import threading
from collections import Counter
from typing import Any

import pytest
from sqlalchemy import select

from models import ToolRun
from streaming.wire.protocol import decode_stream
from tests.cluster.conftest import QUESTIONS, Deployment
from tests.cluster.follower import Follower
from tests.cluster.process import Cluster
from tests.helpers import assert_well_formed

# Each test runs a gunicorn cluster for 10 to 60 s.
pytestmark = pytest.mark.slow

RAISE = "Raise my groceries budget to 400"


def follow(cluster: Cluster, events_url: str) -> list[tuple[int, str, dict[str, Any]]]:
    """Read a turn's events to its end, across reconnects."""
    events = decode_stream(Follower(cluster.url, events_url).run())
    assert_well_formed(events)
    return events


def pause(cluster: Cluster, token: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Ask for a budget change and read the turn to its pause."""
    http = cluster.client(token)
    sid = http.post("/api/sessions").json()["id"]
    started = http.post(f"/api/sessions/{sid}/turns", json={"message": RAISE}).json()
    events = follow(cluster, started["events_url"])
    assert events[-1][2]["status"] == "awaiting_approval"
    [request] = [d for _, t, d in events if t == "approval_requested"]
    return started, request


def executions_of(deployment: Deployment, tool_use_id: str) -> int:
    """How often a call really ran, across every worker (the audit counts turn/tool_use)."""
    return sum(1 for line in deployment.executions() if line.endswith(f"/{tool_use_id}"))


def set_budget_runs(deployment: Deployment) -> list[Any]:
    """The stored set_budget runs."""
    with deployment.db.read() as s:
        return list(s.scalars(select(ToolRun).where(ToolRun.name == "set_budget")))


def test_an_approval_survives_kill_9_and_two_tabs_run_the_tool_once(
    deployment: Deployment,
) -> None:
    # Every timing at half its default, not a quarter: the two tabs' decisions reach workers
    # that just replaced the killed ones, and at a quarter (a database connect or lock wait of
    # about a second) one got 503 storage_unavailable while another cluster shared the CPU.
    env = {**deployment.env, "TIME_SCALE": "0.5"}
    with Cluster(env, workers=2, log=deployment.log) as cluster:
        paused, request = pause(cluster, deployment.token)
        before = set(cluster.worker_pids())
        for pid in before:  # every worker dies while the request waits
            cluster.signal_worker(pid, signal.SIGKILL)
        cluster.wait_for_workers(exclude=before)
        body = {"tool_use_id": request["tool_use_id"], "approved": True}
        answers: list[Any] = []

        def tab() -> None:
            http = cluster.client(deployment.token)
            answers.append(http.post(f"/api/turns/{paused['turn_id']}/approvals", json=body))

        tabs = [threading.Thread(target=tab) for _ in range(2)]
        for t in tabs:
            t.start()
        for t in tabs:
            t.join(30)
        assert [a.status_code for a in answers] == [200, 200], [a.text for a in answers]
        following = {a.json()["continuation_turn_id"] for a in answers}
        assert len(following) == 1, "both tabs see one continuation"
        events = follow(cluster, answers[0].json()["events_url"])
        assert events[-1][2]["status"] == "completed"
    assert executions_of(deployment, request["tool_use_id"]) == 1
    [run] = set_budget_runs(deployment)
    assert (run.status, run.approval, run.is_error) == ("done", "approved", False)


def test_a_worker_killed_as_the_approved_turn_starts_runs_the_tool_exactly_once(
    deployment: Deployment,
) -> None:
    with Cluster(deployment.env, workers=2, log=deployment.log) as cluster:
        paused, request = pause(cluster, deployment.token)
        http = cluster.client(deployment.token)
        decided = http.post(
            f"/api/turns/{paused['turn_id']}/approvals",
            json={"tool_use_id": request["tool_use_id"], "approved": True},
        ).json()
        pid = deployment.worker_pid(decided["continuation_turn_id"])
        if pid:
            cluster.signal_worker(pid, signal.SIGKILL)
        events = follow(cluster, decided["events_url"])
        assert events[-1][2]["status"] == "completed"
        row = deployment.turn_row(decided["continuation_turn_id"])
        assert row.status == "completed"
    # Killed before, during or after the run: its change commits with its result, so a
    # run left unfinished made no change and the new holder makes it, once.
    assert executions_of(deployment, request["tool_use_id"]) == 1
    [run] = set_budget_runs(deployment)
    assert (run.status, run.is_error) == ("done", False), run.result


def test_queued_messages_survive_kill_9_and_run_in_order(deployment: Deployment) -> None:
    with Cluster(deployment.env, workers=2, log=deployment.log) as cluster:
        http = cluster.client(deployment.token)
        sid = http.post("/api/sessions").json()["id"]
        turns = [
            http.post(f"/api/sessions/{sid}/turns", json={"message": q}).json()
            for q in QUESTIONS[:3]
        ]
        assert [t["status"] for t in turns] == ["running", "queued", "queued"]
        # The running turn streams: it dies mid-answer.
        Follower(cluster.url, turns[0]["events_url"]).read_until(
            lambda raw: raw.count(b"id: ") >= 3
        )
        pid = deployment.worker_pid(turns[0]["turn_id"])
        cluster.signal_worker(pid, signal.SIGKILL)
        for turn in turns:
            assert follow(cluster, turn["events_url"])[-1][2]["status"] == "completed"
        shown = http.get(f"/api/sessions/{sid}").json()
        assert shown["queued"] == [] and shown["running_turn_id"] is None
        asked = [
            m["content"][0]["text"]
            for m in shown["messages"]
            if m["role"] == "user" and m["content"][0]["type"] == "text"
        ]
        assert asked == QUESTIONS[:3]
        assert deployment.turn_row(turns[0]["turn_id"]).takeovers >= 1
    runs = Counter(deployment.executions())
    assert runs and max(runs.values()) == 1

"""kill -9 and SIGTERM of gunicorn workers mid-turn: every turn is finished by another."""

from __future__ import annotations

import signal
import threading
import time
from collections import Counter

import pytest

from streaming.wire.protocol import decode_stream
from streaming.wire.view import view_of
from tests.cluster.conftest import QUESTIONS, Deployment
from tests.cluster.follower import Follower
from tests.cluster.process import Cluster
from tests.helpers import assert_well_formed
from tests.waits import wait_until

# Each test runs a gunicorn cluster for 10 to 60 s.
pytestmark = pytest.mark.slow

TURNS = 6


def start_turns(cluster: Cluster, token: str, n: int) -> list[dict]:  # type: ignore[type-arg]
    """Start `n` turns, each in a new session."""
    http = cluster.client(token)
    out = []
    for i in range(n):
        sid = http.post("/api/sessions").json()["id"]
        response = http.post(f"/api/sessions/{sid}/turns", json={"message": QUESTIONS[i % 4]})
        assert response.status_code == 202, response.text
        out.append(response.json())
    return out


def follow_all(
    cluster: Cluster, turns: list[dict]
) -> tuple[list[Follower], list[threading.Thread]]:  # type: ignore[type-arg]
    """Follow every turn's events in its own thread."""
    followers = [Follower(cluster.url, t["events_url"]) for t in turns]
    threads = [threading.Thread(target=f.run, daemon=True) for f in followers]
    for thread in threads:
        thread.start()
    return followers, threads


def check_turns(
    deployment: Deployment, cluster: Cluster, turns: list[dict], followers: list[Follower]
) -> int:  # type: ignore[type-arg]
    """Every turn completed; what each client stitched is the full log and the answer."""
    takeovers = 0
    for turn, follower in zip(turns, followers, strict=True):
        row = deployment.turn_row(turn["turn_id"])
        assert row.status == "completed", (row.status, row.error_code, row.error_message)
        takeovers += row.takeovers
        fresh = Follower(cluster.url, turn["events_url"]).run()
        assert follower.stitched == fresh, "a reconnecting client saw other events"
        events = decode_stream(fresh)
        assert_well_formed(events)
        assert view_of(fresh).shown_text() == deployment.answer_text(turn["turn_id"])
    runs = Counter(deployment.executions())
    assert runs and max(runs.values()) == 1, "a tool ran twice for one tool_use id"
    return takeovers


def every_client_reads(followers: list[Follower]) -> None:
    """Wait until every turn streams: each client has read a few events of its answer."""
    wait_until(lambda: min(f.last for f in followers) >= 3, 30, "a turn does not stream")


def test_kill_9_of_every_worker_while_six_turns_stream(deployment: Deployment) -> None:
    with Cluster(deployment.env, workers=3, log=deployment.log) as cluster:
        turns = start_turns(cluster, deployment.token, TURNS)
        followers, threads = follow_all(cluster, turns)
        every_client_reads(followers)
        originals = cluster.worker_pids()
        for pid in originals:
            cluster.signal_worker(pid, signal.SIGKILL)
            time.sleep(1.0)  # the kills come a second apart: the scenario, not a wait
        for thread in threads:
            thread.join(180)
        takeovers = check_turns(deployment, cluster, turns, followers)
    # Each turn was running on one of the killed workers.
    assert takeovers >= TURNS
    assert all(deployment.turn_row(t["turn_id"]).takeovers >= 1 for t in turns)


def test_sigterm_hands_running_turns_over_and_none_is_interrupted(deployment: Deployment) -> None:
    with Cluster(deployment.env, workers=2, log=deployment.log) as cluster:
        turns = start_turns(cluster, deployment.token, TURNS)
        followers, threads = follow_all(cluster, turns)
        every_client_reads(followers)
        busy = deployment.worker_pid(turns[0]["turn_id"])
        cluster.signal_worker(busy, signal.SIGTERM)
        cluster.wait_for_workers(exclude={busy})
        for thread in threads:
            thread.join(180)
        takeovers = check_turns(deployment, cluster, turns, followers)
    assert takeovers >= 1, "the drained worker ran at least the first turn"

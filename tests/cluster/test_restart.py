"""The single-process defaults (SQLite, in-process log): a killed server resumes its turns.

The in-process log spools each turn's events to a file, so the restarted server (or the
worker gunicorn starts in place of a killed one) continues the numbering exactly: a client
reconnecting with Last-Event-ID just keeps reading.
"""

from __future__ import annotations

import signal
from collections import Counter

import pytest

from streaming.messages.history import validate_history
from streaming.wire.protocol import decode_stream
from streaming.wire.view import view_of
from tests.cluster.conftest import Deployment
from tests.cluster.follower import Follower
from tests.cluster.process import Cluster
from tests.helpers import assert_well_formed

# Each test runs a gunicorn cluster for 10 to 60 s.
pytestmark = pytest.mark.slow

QUESTION = "What did I spend on groceries last month?"


def in_second_round(stitched: bytes) -> bool:
    """True once the model streams text after the first tool result."""
    kinds = [t for _, t, _ in decode_stream(stitched)]
    return "tool_result" in kinds and kinds[kinds.index("tool_result") :].count("block_delta") > 3


def check_resumed(single: Deployment, cluster: Cluster, turn: dict, follower: Follower) -> None:  # type: ignore[type-arg]
    """The turn completed; the client's stitched stream is the full one, well formed, exact."""
    follower.run(120)
    row = single.turn_row(turn["turn_id"])
    assert (row.status, row.takeovers) == ("completed", 1), (row.status, row.error_message)
    fresh = Follower(cluster.url, turn["events_url"]).run()
    assert follower.stitched == fresh
    assert_well_formed(decode_stream(fresh))
    assert view_of(fresh).shown_text() == single.answer_text(turn["turn_id"])
    assert max(Counter(single.executions()).values()) == 1


def test_a_restarted_server_resumes_the_turn_and_continues_its_numbering(
    single: Deployment,
) -> None:
    cluster = Cluster(single.env, workers=1, log=single.log)
    cluster.start()
    try:
        http = cluster.client(single.token)
        sid = http.post("/api/sessions").json()["id"]
        turn = http.post(f"/api/sessions/{sid}/turns", json={"message": QUESTION}).json()
        follower = Follower(cluster.url, turn["events_url"])
        follower.read_until(in_second_round)
        cluster.kill_all()
    finally:
        cluster.stop()
    restarted = Cluster(single.env, workers=1, log=single.log, port=cluster.port)
    with restarted:
        check_resumed(single, restarted, turn, follower)
        http = restarted.client(single.token)
        nxt = http.post(f"/api/sessions/{sid}/turns", json={"message": "Am I over budget?"})
        assert nxt.status_code == 202, nxt.text
        events = decode_stream(Follower(restarted.url, nxt.json()["events_url"]).run())
        assert events[-1][2]["status"] == "completed"
        stored = http.get(f"/api/sessions/{sid}").json()["messages"]
        history = [
            {"role": m["role"], "content": m["content"]}
            for m in stored
            if m["status"] in ("complete", "incomplete")
        ]
        assert validate_history(history, expect_user_last=False) == []


def test_a_killed_worker_is_replaced_and_the_new_one_finishes_its_turn(
    single: Deployment,
) -> None:
    with Cluster(single.env, workers=1, log=single.log) as cluster:
        http = cluster.client(single.token)
        sid = http.post("/api/sessions").json()["id"]
        turn = http.post(f"/api/sessions/{sid}/turns", json={"message": QUESTION}).json()
        follower = Follower(cluster.url, turn["events_url"])
        follower.read_until(in_second_round)
        [worker] = cluster.worker_pids()
        cluster.signal_worker(worker, signal.SIGKILL)
        cluster.wait_for_workers(exclude={worker})
        check_resumed(single, cluster, turn, follower)

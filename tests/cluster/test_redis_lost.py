"""Redis restarted empty (no persistence) under three workers, alone and while a worker dies:
every client's stream still shows exactly the stored answer, spliced nowhere.

A living holder writes its turn's log again under the same ids; a worker taking over a turn
whose log is gone starts the next epoch (ids above any a client holds, `reset: true`).
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cluster.conftest import Deployment
from tests.cluster.process import Cluster
from tests.cluster.test_worker_deaths import follow_all, start_turns
from tests.helpers import assert_client_saw
from tests.private_redis import PrivateRedis
from tests.waits import wait_until

# Each test runs a gunicorn cluster for 10 to 60 s.
pytestmark = pytest.mark.slow

TURNS = 4


@pytest.fixture
def lost_redis(deployment: Deployment, tmp_path: Path) -> Iterator[PrivateRedis]:
    server = PrivateRedis(tmp_path / "redis")
    deployment.env["EVENT_LOG_URL"] = server.url
    yield server
    server.close()


def run_through(deployment: Deployment, lost_redis: PrivateRedis, kill: bool) -> list[int]:
    """Start four turns, lose Redis's data mid-answer (and kill their workers); check clients."""
    with Cluster(deployment.env, workers=3, log=deployment.log) as cluster:
        turns = start_turns(cluster, deployment.token, TURNS)
        followers, threads = follow_all(cluster, turns)
        wait_until(  # every client has read part of its answer
            lambda: min(f.last for f in followers) >= 10, 30, "the clients read nothing"
        )
        # Killed first, so no living holder writes the log again before its taker comes: every
        # taker must find its log lost (the other order is the soak's, where either may happen).
        for pid in {deployment.worker_pid(t["turn_id"]) for t in turns} if kill else set():
            cluster.signal_worker(pid, signal.SIGKILL)
        lost_redis.restart_empty()
        for thread in threads:
            thread.join(180)
        resets = []
        for turn, follower in zip(turns, followers, strict=True):
            row = deployment.turn_row(turn["turn_id"])
            assert row.status == "completed", (row.status, row.error_code, row.error_message)
            if kill:
                assert row.takeovers >= 1
            fresh = type(follower)(cluster.url, turn["events_url"]).run()
            answer = deployment.answer_text(turn["turn_id"])
            resets.append(assert_client_saw(follower.stitched, fresh, answer))
    return resets


def test_redis_restarted_empty_while_turns_stream_loses_and_splices_nothing(
    deployment: Deployment, lost_redis: PrivateRedis
) -> None:
    assert run_through(deployment, lost_redis, kill=False) == [0] * TURNS, "written again"


def test_redis_restarted_empty_while_their_workers_die_resets_every_client_exactly(
    deployment: Deployment, lost_redis: PrivateRedis
) -> None:
    resets = run_through(deployment, lost_redis, kill=True)
    assert all(n >= 1 for n in resets), "each turn's new holder found its log lost"

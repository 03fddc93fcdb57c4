"""Outages of Redis and PostgreSQL on a 3-worker cluster, alone and with a worker killed.

Every timing is the default scaled by the deployment's TIME_SCALE, the outages too: every
turn ends `completed` with exactly the answer its clients were shown, no row is left
`streaming`, nothing ends `interrupted`, no tool runs twice. The faults' sleeps hold an
outage for its length or space its steps: they are the scenario, not waits.
"""

from __future__ import annotations

import signal
import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlalchemy import select

from config import load_timings
from models import Message, Turn
from tests.cluster.conftest import Deployment
from tests.cluster.process import Cluster
from tests.cluster.test_control import executions_of, follow, pause
from tests.cluster.test_worker_deaths import (
    check_turns,
    every_client_reads,
    follow_all,
    start_turns,
)
from tests.outage import ServiceProxy, assert_storage_unavailable

# Each test runs a gunicorn cluster for 10 to 60 s.
pytestmark = pytest.mark.slow

TURNS = 8
QUEUED = "Which subscriptions am I paying for? (sent while a turn ran)"


@pytest.fixture
def redis_proxy() -> Iterator[ServiceProxy]:
    proxy = ServiceProxy(6379)
    yield proxy
    proxy.close()


@pytest.fixture
def postgres_proxy() -> Iterator[ServiceProxy]:
    proxy = ServiceProxy(5432)
    yield proxy
    proxy.close()


def settled(deployment: Deployment, turn_ids: list[str]) -> None:
    """No row of these turns is left streaming, none interrupted, none held by a worker."""
    with deployment.db.read() as s:
        rows = s.scalars(select(Turn).where(Turn.id.in_(turn_ids))).all()
        statuses = s.scalars(select(Message.status).where(Message.turn_id.in_(turn_ids))).all()
    assert {r.status for r in rows} == {"completed"}
    assert all(r.worker_id is None for r in rows)
    assert "streaming" not in statuses


def through(
    deployment: Deployment,
    env: dict[str, str],
    fault: Callable[[Cluster, dict[str, int]], None],
    before: Callable[[Cluster], None] | None = None,
    after: Callable[[Cluster], None] | None = None,
) -> dict[str, int]:
    """Run TURNS turns on 3 workers, each followed by a client, through `fault` (given the
    cluster and each turn's worker pid); check every turn; return where each one ran.
    `before` and `after` run on the cluster before the turns start and once they are checked."""
    with Cluster(env, workers=3, log=deployment.log) as cluster:
        if before is not None:
            before(cluster)
        turns = start_turns(cluster, deployment.token, TURNS)
        followers, threads = follow_all(cluster, turns)
        every_client_reads(followers)
        where = {t["turn_id"]: deployment.worker_pid(t["turn_id"]) for t in turns}
        fault(cluster, where)
        for thread in threads:
            thread.join(180)
        check_turns(deployment, cluster, turns, followers)
        if after is not None:
            after(cluster)
    settled(deployment, list(where))
    return where


def busiest(where: dict[str, int]) -> int:
    """The worker running the most turns (several)."""
    pid, count = Counter(where.values()).most_common(1)[0]
    assert count >= 2
    return pid


def test_redis_down_then_the_worker_running_the_most_turns_killed(
    deployment: Deployment, redis_proxy: ServiceProxy
) -> None:
    env = {**deployment.env, "EVENT_LOG_URL": redis_proxy.url(deployment.env["EVENT_LOG_URL"])}
    scale = float(env["TIME_SCALE"])
    killed: list[int] = []

    def fault(cluster: Cluster, where: dict[str, int]) -> None:
        killed.append(busiest(where))
        redis_proxy.down()
        time.sleep(1 * scale)
        cluster.signal_worker(killed[0], signal.SIGKILL)
        time.sleep(10 * scale)
        redis_proxy.up()

    where = through(deployment, env, fault)
    orphaned = [turn_id for turn_id, pid in where.items() if pid == killed[0]]
    assert all(deployment.turn_row(turn_id).takeovers >= 1 for turn_id in orphaned)
    # Taken over while Redis was still down: given back, then taken again once it was up.
    assert "event log is unreachable" in deployment.log.read_text()


def test_postgres_unreachable_for_20_seconds_is_waited_out(
    deployment: Deployment, postgres_proxy: ServiceProxy
) -> None:
    env = {**deployment.env, "DATABASE_URL": postgres_proxy.url(deployment.env["DATABASE_URL"])}
    scale = float(env["TIME_SCALE"])
    assert 20 * scale > load_timings(env).stale_after  # longer than a silent worker is trusted

    def fault(cluster: Cluster, where: dict[str, int]) -> None:
        http = cluster.client(deployment.token)
        postgres_proxy.down()
        time.sleep(1 * scale)
        assert_storage_unavailable(http.post("/api/sessions"))
        assert_storage_unavailable(http.get("/healthz"))
        time.sleep(19 * scale)
        postgres_proxy.up()

    where = through(deployment, env, fault)
    takeovers = [deployment.turn_row(turn_id).takeovers for turn_id in where]
    assert takeovers == [0] * TURNS, "an outage is not a worker's death"


def test_postgres_and_redis_down_together_with_a_worker_killed(
    deployment: Deployment, redis_proxy: ServiceProxy, postgres_proxy: ServiceProxy
) -> None:
    env = {
        **deployment.env,
        "EVENT_LOG_URL": redis_proxy.url(deployment.env["EVENT_LOG_URL"]),
        "DATABASE_URL": postgres_proxy.url(deployment.env["DATABASE_URL"]),
    }
    scale = float(env["TIME_SCALE"])

    def fault(cluster: Cluster, where: dict[str, int]) -> None:
        redis_proxy.down()
        postgres_proxy.down()
        time.sleep(1 * scale)
        cluster.signal_worker(busiest(where), signal.SIGKILL)
        time.sleep(10 * scale)
        postgres_proxy.up()
        time.sleep(5 * scale)
        redis_proxy.up()

    through(deployment, env, fault)


def test_a_pending_approval_and_a_queued_message_outlive_redis_a_kill_and_postgres(
    deployment: Deployment, redis_proxy: ServiceProxy, postgres_proxy: ServiceProxy
) -> None:
    env = {
        **deployment.env,
        "EVENT_LOG_URL": redis_proxy.url(deployment.env["EVENT_LOG_URL"]),
        "DATABASE_URL": postgres_proxy.url(deployment.env["DATABASE_URL"]),
    }
    scale = float(env["TIME_SCALE"])
    waiting: dict[str, Any] = {}

    def before(cluster: Cluster) -> None:
        waiting["paused"], waiting["request"] = pause(cluster, deployment.token)

    def fault(cluster: Cluster, where: dict[str, int]) -> None:
        killed = busiest(where)
        # A message queued behind a turn of the worker about to die.
        http = cluster.client(deployment.token)
        behind = next(turn_id for turn_id, pid in where.items() if pid == killed)
        sid = http.get(f"/api/turns/{behind}").json()["session_id"]
        queued = http.post(f"/api/sessions/{sid}/turns", json={"message": QUEUED})
        assert queued.status_code == 202 and queued.json()["status"] == "queued", queued.text
        waiting["queued"], waiting["behind"] = queued.json(), behind
        redis_proxy.down()
        time.sleep(1 * scale)
        cluster.signal_worker(killed, signal.SIGKILL)
        time.sleep(10 * scale)
        redis_proxy.up()
        postgres_proxy.down()
        time.sleep(20 * scale)
        postgres_proxy.up()

    def after(cluster: Cluster) -> None:
        queued = follow(cluster, waiting["queued"]["events_url"])
        assert queued[-1][2]["status"] == "completed"
        http = cluster.client(deployment.token)
        shown = http.get(f"/api/sessions/{waiting['queued']['session_id']}").json()
        asked = [m for m in shown["messages"] if m["content"][0].get("text") == QUEUED]
        assert asked and asked[0]["turn_id"] == waiting["queued"]["turn_id"]
        answers = [m["turn_id"] for m in shown["messages"] if m["role"] == "assistant"]
        assert answers[0] == waiting["behind"] and answers[-1] == waiting["queued"]["turn_id"]
        paused, request = waiting["paused"], waiting["request"]
        decided = http.post(
            f"/api/turns/{paused['turn_id']}/approvals",
            json={"tool_use_id": request["tool_use_id"], "approved": True},
        )
        assert decided.status_code == 200, decided.text
        events = follow(cluster, decided.json()["events_url"])
        assert events[-1][2]["status"] == "completed"
        [result] = [d for _, t, d in events if t == "tool_result"]
        assert result["is_error"] is False, result

    through(deployment, env, fault, before, after)
    assert executions_of(deployment, waiting["request"]["tool_use_id"]) == 1
    assert deployment.turn_row(waiting["queued"]["turn_id"]).status == "completed"

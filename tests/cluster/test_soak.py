"""Soak: many turns on three gunicorn workers (PostgreSQL + Redis) under upstream faults,
client drops, workers killed with SIGKILL or drained with SIGTERM, and Redis and PostgreSQL
outages (alone, together, and with kills), all along.

Prints turns, faults by kind, outages, takeovers, lost, duplicated, invalid histories,
double tool runs and turns ended `interrupted`; the last five must be 0. `make soak` shows it.
"""

from __future__ import annotations

import random
import signal
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx2
import pytest

from models import Turn
from streaming.history import validate_history
from streaming.protocol import decode_stream
from streaming.view import view_of
from tests.cluster.conftest import QUESTIONS, Deployment
from tests.cluster.follower import Follower
from tests.cluster.process import Cluster
from tests.faults.test_engine_faults import upstream_answer
from tests.faults.upstream import (
    ErrorAfter,
    Fault,
    FaultyUpstream,
    Normal,
    ResetAfter,
    StallAfter,
    Status,
)
from tests.helpers import assert_well_formed
from tests.outage import ServiceProxy

TURNS = 120
CONCURRENCY = 8
SCALE = 0.1  # every timing at 1/10: stall 6 s, heartbeat 0.1 s, stale after 0.6 s
PACE = 0.01  # seconds between upstream events: a round takes about a second


def fault_maker(rng: random.Random) -> Any:
    """Draw one upstream fault (or a normal, paced reply)."""
    kinds = [
        lambda: Status(429, retry_after=0.05),
        lambda: Status(529),
        lambda: Status(500),
        lambda: ErrorAfter(rng.randint(1, 40)),
        lambda: ResetAfter(rng.randint(1, 40), delay=PACE),
        lambda: StallAfter(rng.randint(1, 30), seconds=8, pings=rng.random() < 0.5),
    ]

    def choose(index: int, body: dict[str, Any]) -> Fault:
        return rng.choice(kinds)() if rng.random() < 0.25 else Normal(delay=PACE)

    return choose


class Chaos:
    """Every couple of seconds: kills (SIGKILL) or drains (SIGTERM) a random worker, or takes
    Redis or PostgreSQL down for 5 to 40 s (scaled, as every timing)."""

    def __init__(
        self, cluster: Cluster, rng: random.Random, services: dict[str, ServiceProxy]
    ) -> None:
        self.cluster, self.rng, self.services = cluster, rng, services
        self.done = threading.Event()
        self.signals: Counter[str] = Counter()
        self.outages: Counter[str] = Counter()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _outage(self) -> None:
        name = sorted(self.services)[sum(self.outages.values()) % len(self.services)]
        proxy = self.services[name]
        proxy.down()
        self.outages[name] += 1
        seconds = self.rng.uniform(5, 40) * SCALE
        threading.Timer(seconds, proxy.up).start()

    def _run(self) -> None:
        while not self.done.wait(self.rng.uniform(1.5, 3.0)):
            if self.rng.random() < 0.3:
                self._outage()
                continue
            pids = self.cluster.worker_pids()
            if len(pids) < self.cluster.workers:
                continue  # a replacement is still starting
            pid = self.rng.choice(pids)
            sig = signal.SIGKILL if self.rng.random() < 0.6 else signal.SIGTERM
            self.cluster.signal_worker(pid, sig)
            self.signals[sig.name] += 1
            while not self.done.is_set():  # a replacement boots (once the database is up)
                try:
                    self.cluster.wait_for_workers(exclude={pid}, timeout=1)
                    break
                except RuntimeError:
                    continue


@pytest.fixture
def faulty(deployment: Deployment) -> Any:
    with FaultyUpstream() as upstream:
        deployment.env.update(
            {
                "ANTHROPIC_API_KEY": "sk-soak",
                "ANTHROPIC_BASE_URL": upstream.url,
                "TIME_SCALE": str(SCALE),
            }
        )
        yield upstream


@pytest.fixture
def services(deployment: Deployment) -> Any:
    """Redis and PostgreSQL behind proxies the chaos can take down."""
    proxies = {"redis": ServiceProxy(6379), "postgres": ServiceProxy(5432)}
    deployment.env["EVENT_LOG_URL"] = proxies["redis"].url(deployment.env["EVENT_LOG_URL"])
    deployment.env["DATABASE_URL"] = proxies["postgres"].url(deployment.env["DATABASE_URL"])
    yield proxies
    for proxy in proxies.values():
        proxy.close()


def test_soak_under_faults_worker_deaths_and_outages(
    deployment: Deployment,
    faulty: FaultyUpstream,
    services: dict[str, ServiceProxy],
    capsys: pytest.CaptureFixture[str],
) -> None:
    rng = random.Random(20261123)
    faulty.set_chooser(fault_maker(rng))
    results: dict[int, tuple[dict[str, Any], Follower]] = {}
    with Cluster(deployment.env, workers=3, log=deployment.log) as cluster:
        http = cluster.client(deployment.token)

        def one(i: int) -> None:
            question = f"{QUESTIONS[i % len(QUESTIONS)]} (#{i})"
            turn = start_turn(http, question)
            follower = Follower(cluster.url, turn["events_url"], random.Random(i))
            follower.run(300)
            results[i] = (turn, follower)

        chaos = Chaos(cluster, random.Random(7), services)
        chaos.thread.start()
        try:
            with ThreadPoolExecutor(max_workers=CONCURRENCY) as pool:
                list(pool.map(one, range(TURNS)))
        finally:
            chaos.done.set()
            chaos.thread.join(60)
            for proxy in services.values():
                proxy.up()
        figures = tally(deployment, cluster, faulty, results)
    figures.update(signals=dict(chaos.signals), outages=dict(chaos.outages))
    with capsys.disabled():
        print("\ncluster soak: " + " ".join(f"{k}={v}" for k, v in figures.items()))
    assert figures["lost"] == figures["duplicated"] == figures["invalid_histories"] == 0
    assert figures["double_tool_runs"] == 0 and figures["interrupted"] == 0
    assert figures["takeovers"] >= 5, "the chaos must have hit running turns"
    assert sum(chaos.signals.values()) >= 6
    assert chaos.outages["redis"] >= 1 and chaos.outages["postgres"] >= 1


def start_turn(http: Any, question: str) -> dict[str, Any]:
    """Start a turn as a careful client does while workers die under it."""
    sid = retrying(lambda: http.post("/api/sessions")).json()["id"]
    for _ in range(100):
        try:
            response = http.post(f"/api/sessions/{sid}/turns", json={"message": question})
        except httpx2.TransportError:
            # The worker died with the request: did the turn start before it did?
            messages = retrying(lambda: http.get(f"/api/sessions/{sid}")).json()["messages"]
            asked = [m["turn_id"] for m in messages if m["content"][0].get("text") == question]
            if asked:
                path = f"/api/turns/{asked[0]}"
                shown = retrying(lambda path=path: http.get(path)).json()
                return {**shown, "turn_id": asked[0], "session_id": sid}
            continue
        if response.status_code == 202:
            return response.json()
        # A draining worker, or the database out: try again (another worker, or later).
        assert response.status_code == 503, response.text
        time.sleep(0.1 if response.json()["error"]["code"] == "server_restarting" else 0.5)
    raise AssertionError("no worker would start the turn")


def retrying(call: Any) -> Any:
    """Call until no worker dies under the request and the database answers (reads and
    session creation only)."""
    for _ in range(200):
        try:
            response = call()
        except httpx2.TransportError:
            time.sleep(0.1)
            continue
        if response.status_code != 503:
            return response
        time.sleep(0.25)
    raise AssertionError("the cluster never answered")


def tally(
    deployment: Deployment,
    cluster: Cluster,
    upstream: FaultyUpstream,
    results: dict[int, tuple[dict[str, Any], Follower]],
) -> dict[str, Any]:
    """Check every turn from outside and count what went wrong."""
    lost = duplicated = invalid = reconnects = takeovers = 0
    statuses: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    last_body = {_turn_index(b): b for b in upstream.requests}
    for i, (turn, follower) in sorted(results.items()):
        reconnects += follower.reconnects
        fresh = Follower(cluster.url, turn["events_url"]).run()
        seqs = [seq for seq, _, _ in decode_stream(follower.stitched)]
        total = len(decode_stream(fresh))
        lost += len(set(range(1, total + 1)) - set(seqs))
        duplicated += len(seqs) - len(set(seqs))
        assert follower.stitched == fresh, f"turn {i}: the reconnected stream differs"
        assert_well_formed(decode_stream(fresh))
        row: Turn = deployment.turn_row(turn["turn_id"])
        statuses[row.status] += 1
        if row.error_code:
            errors[row.error_code] += 1
        takeovers += row.takeovers
        assert view_of(fresh).shown_text() == deployment.answer_text(turn["turn_id"]), i
        conversation = deployment.conversation(turn["session_id"])
        problems = validate_history(conversation, expect_user_last=False)
        if problems:
            invalid += 1
            print(f"turn {i} ({row.status}, {row.takeovers} takeovers): {problems}")
        if row.status == "completed":
            assert conversation[-1]["content"] == upstream_answer(last_body[i]), i
    runs = Counter(deployment.executions())
    served = Counter(upstream.served)
    return {
        "turns": len(results),
        "statuses": dict(statuses),
        "errors": dict(errors),
        "faults_injected": sum(n for kind, n in served.items() if kind != "Normal"),
        "faults_by_kind": dict(served),
        "takeovers": takeovers,
        "reconnects": reconnects,
        "lost": lost,
        "duplicated": duplicated,
        "invalid_histories": invalid,
        "tool_runs": len(runs),
        "double_tool_runs": sum(n - 1 for n in runs.values()),
        "interrupted": statuses["interrupted"],
    }


def _turn_index(body: dict[str, Any]) -> int:
    first = body["messages"][0]["content"]
    text = first if isinstance(first, str) else first[0]["text"]
    return int(text.rsplit("(#", 1)[1].rstrip(")"))

"""Two gunicorn workers: revocations reach all streams, /metrics sums both, access log."""

from __future__ import annotations

import json
import threading

import httpx2
import pytest

from tests.cluster.conftest import Deployment
from tests.cluster.follower import Follower
from tests.cluster.process import Cluster
from tests.cluster.test_worker_deaths import start_turns
from tests.waits import wait_until

# Each test runs a gunicorn cluster for 10 to 60 s.
pytestmark = pytest.mark.slow


def metric_values(text: str) -> dict[str, float]:
    """Parse the exposition text into {'name{labels}': value}."""
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            out[name] = float(value)
    return out


def test_revocation_metrics_and_access_log_across_two_workers(deployment: Deployment) -> None:
    with Cluster(deployment.env, workers=2, log=deployment.log) as cluster:
        http = cluster.client(deployment.token)
        done = start_turns(cluster, deployment.token, 2)
        for turn in done:
            Follower(cluster.url, turn["events_url"]).run()

        made = http.post("/api/tokens", json={"name": "cluster"}).json()
        mine = cluster.client(made["token"])
        sid = mine.post("/api/sessions").json()["id"]
        turn = mine.post(f"/api/sessions/{sid}/turns", json={"message": "How am I doing?"}).json()
        raw = bytearray()

        def read() -> None:
            with mine.stream("GET", f"/api/turns/{turn['turn_id']}/events") as response:
                for chunk in response.iter_raw():
                    raw.extend(chunk)

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        wait_until(lambda: raw.count(b"\nevent: ") >= 3, 30, "the turn does not stream")
        # Several fresh connections: whichever worker answers, the other's stream must end.
        for _ in range(3):
            with httpx2.Client(base_url=cluster.url, headers=http.headers) as other:
                other.get("/healthz")
        assert http.delete(f"/api/tokens/{made['id']}").status_code == 204
        reader.join(20)
        # Ended, and by the revocation: the turn itself had not ended.
        assert not reader.is_alive(), "the stream outlived its token"
        assert b"event: error" in raw and b"token_revoked" in raw and b"turn_end" not in raw
        assert mine.get("/api/sessions").status_code == 401
        http.post(f"/api/turns/{turn['turn_id']}/cancel")

        seen = []
        for _ in range(6):  # fresh connections land on either worker: the same sums
            text = httpx2.get(f"{cluster.url}/metrics", timeout=10).text
            seen.append(metric_values(text))
        completed = {v.get('chat_turns_finished_total{status="completed"}') for v in seen}
        assert completed == {2.0}, sorted(k for k in seen[0] if "finished" in k or "turn" in k)
        assert all(v["chat_events_published_total"] > 0 for v in seen)

        lines = [
            json.loads(line)
            for line in deployment.log.read_text().splitlines()
            if line.startswith('{"method"')
        ]
        streams = [line for line in lines if line.get("stream")]
        assert any(
            line["turn_id"] == turn["turn_id"] and line["path"] == "/api/turns/<turn_id>/events"
            for line in streams
        )
        assert any(line["path"].startswith("/api/tokens/<int") for line in lines)

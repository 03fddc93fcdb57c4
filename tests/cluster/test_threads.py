"""A worker's threads are fixed when it starts: 100 running turns add none of their own."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import func, select

from models import Turn
from tests.cluster.conftest import Deployment
from tests.cluster.process import Cluster

TURNS = 100


def threads(pid: int) -> list[str]:
    """The names of a process's threads."""
    tasks = Path(f"/proc/{pid}/task")
    return [(task / "comm").read_text().strip() for task in tasks.iterdir()]


def test_a_worker_running_100_turns_has_at_most_8_more_threads_than_idle(
    single: Deployment,
) -> None:
    db = single.db
    # The demo model at a fifth of its test pace (0.05 s between events): every turn must
    # still run when they are counted, and on a loaded machine starting 100 took long enough
    # at 0.05 s that a quarter had ended.
    env = {**single.env, "DEMO_EVENT_DELAY": "0.25"}
    with Cluster(env, workers=1, log=single.log) as cluster:
        [pid] = cluster.worker_pids()
        http = cluster.client(single.token)
        assert http.get("/healthz").status_code == 200
        idle = threads(pid)
        started = []
        for i in range(TURNS):
            sid = http.post("/api/sessions").json()["id"]
            turn = http.post(f"/api/sessions/{sid}/turns", json={"message": f"How am I doing? {i}"})
            assert turn.status_code == 202, turn.text
            started.append(turn.json()["turn_id"])
        with db.read() as s:
            running = s.scalar(
                select(func.count()).select_from(Turn).where(Turn.status == "running")
            )
        busy = threads(pid)
        assert running >= TURNS * 0.9, "the turns were still running when counted"
        assert len(busy) <= len(idle) + 8, sorted(set(busy) - set(idle))
        print(f"\nthreads: idle {len(idle)}, with {running} turns running {len(busy)}")

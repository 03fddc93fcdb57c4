"""A worker's threads are fixed when it starts: 100 running turns add none of their own."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import func, select

from demo_data.finance import seed_finance
from models import Turn
from models.db import Database
from models.migrate import upgrade
from tests.cluster.process import Cluster
from tests.conftest import make_user

TURNS = 100


def threads(pid: int) -> list[str]:
    """The names of a process's threads."""
    tasks = Path(f"/proc/{pid}/task")
    return [(task / "comm").read_text().strip() for task in tasks.iterdir()]


def test_a_worker_running_100_turns_has_at_most_8_more_threads_than_idle(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'threads.db'}"
    upgrade(url)
    db = Database(url)
    user_id, token = make_user(db, "threads")
    seed_finance(db, user_id, months=3, seed=4)
    env = {
        "DATABASE_URL": url,
        "EVENT_LOG_URL": "memory://",
        "INSTANCE_PATH": str(tmp_path / "instance"),
        "ANTHROPIC_API_KEY": "",
        "DEMO_EVENT_DELAY": "0.05",  # each turn streams for several seconds
        "SECRET_KEY": "threads",
    }
    with Cluster(env, workers=1, log=tmp_path / "gunicorn.log") as cluster:
        [pid] = cluster.worker_pids()
        http = cluster.client(token)
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
    db.dispose()

"""A PostgreSQL + Redis deployment for cluster tests: migrated, seeded, with a token."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from demo_data.generator import seed_finance
from engine.store.messages import MessageStore
from models import Message, Turn, Worker
from models.db import Database
from models.migrate import upgrade
from tests.backends import migrated_postgres, redis_or_skip
from tests.conftest import make_user

# `make test` runs the cluster tests on CLUSTER_WORKERS (3) pytest-xdist workers, handing each
# worker the next test when it is done (`--maxschedchunk 1`): the longest go first, so that no
# worker is left running a long one alone at the end. The modules by their tests' length,
# longest first (measured two at a time at load 7 to 15: the soak 323 s, the outages 83 to 121 s
# each, the rest 32 to 130 s; three at a time on a quiet machine: the soak 138 to 154 s, the
# rest 5 to 63 s); a module not named here runs after them.
LONGEST_FIRST = (
    "test_soak.py",
    "test_outages.py",
    "test_worker_deaths.py",
    "test_redis_lost.py",
    "test_control.py",
    "test_restart.py",
    "test_connector.py",
    "test_accounts.py",
    "test_upload_places.py",
    "test_threads.py",
    "test_start.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Put the cluster tests in LONGEST_FIRST order, in the places they had among the others."""
    here = Path(__file__).parent
    places = [k for k, item in enumerate(items) if item.path.parent == here]
    rank = {name: k for k, name in enumerate(LONGEST_FIRST)}
    ordered = sorted(
        (items[k] for k in places), key=lambda item: rank.get(item.path.name, len(rank))
    )
    for k, item in zip(places, ordered, strict=True):
        items[k] = item


QUESTIONS = [
    "What did I spend on groceries last month?",
    "Am I over budget anywhere?",
    "Which subscriptions am I paying for?",
    "How am I doing?",
]


@dataclass
class Deployment:
    """What a cluster test needs: the environment, a user's token, the database, the audit."""

    env: dict[str, str]
    token: str
    db: Database
    audit: Path
    log: Path

    def executions(self) -> list[str]:
        """Return one tool_use id per real tool execution, across all workers."""
        return self.audit.read_text().split() if self.audit.exists() else []

    def turn_row(self, turn_id: str) -> Any:
        """Return a turn's stored row."""
        with self.db.read() as s:
            return s.get(Turn, turn_id)

    def conversation(self, session_id: str) -> list[dict[str, Any]]:
        """The session's stored conversation as the model sees it."""
        return MessageStore(self.db).conversation(session_id)

    def worker_pid(self, turn_id: str) -> int:
        """Return the pid of the worker running a turn."""
        with self.db.read() as s:
            return s.scalar(
                select(Worker.pid).join(Turn, Turn.worker_id == Worker.id).where(Turn.id == turn_id)
            )

    def answer_text(self, turn_id: str) -> str:
        """The text of the turn's stored assistant messages, as a client should show it."""
        with self.db.read() as s:
            rows = s.scalars(
                select(Message)
                .where(Message.turn_id == turn_id, Message.role == "assistant")
                .where(Message.status.in_(("complete", "incomplete")))
                .order_by(Message.position)
            ).all()
        return "".join(b.get("text", "") for m in rows for b in m.content if b["type"] == "text")


@pytest.fixture
def deployment(tmp_path: Path) -> Iterator[Deployment]:
    """PostgreSQL + Redis, slowed demo model, every timing at 1/4 of its default."""
    redis_url = redis_or_skip()
    with migrated_postgres() as pg_url:
        db = Database(pg_url)
        user_id, token = make_user(db, "cluster")
        seed_finance(db, user_id, months=3, seed=3)
        env = {
            "DATABASE_URL": pg_url,
            "EVENT_LOG_URL": redis_url,
            "SECRET_KEY": "cluster-secret",
            "INSTANCE_PATH": str(tmp_path / "instance"),
            "ANTHROPIC_API_KEY": "",
            "DEMO_EVENT_DELAY": "0.08",
            "TIME_SCALE": "0.25",
            "TOOL_AUDIT_FILE": str(tmp_path / "tools.audit"),
            "LOG_LEVEL": "INFO",
        }
        try:
            yield Deployment(env, token, db, tmp_path / "tools.audit", tmp_path / "gunicorn.log")
        finally:
            db.dispose()


@pytest.fixture
def single(tmp_path: Path) -> Iterator[Deployment]:
    """SQLite and the in-process log, as `make run` has them; timings at 1/4."""
    url = f"sqlite:///{tmp_path / 'chat.db'}"
    upgrade(url)
    db = Database(url)
    user_id, token = make_user(db, "solo")
    seed_finance(db, user_id, months=3, seed=4)
    env = {
        "DATABASE_URL": url,
        "EVENT_LOG_URL": "memory://",
        "SECRET_KEY": "solo-secret",
        "INSTANCE_PATH": str(tmp_path / "instance"),
        "ANTHROPIC_API_KEY": "",
        "DEMO_EVENT_DELAY": "0.05",
        "TIME_SCALE": "0.25",
        "TOOL_AUDIT_FILE": str(tmp_path / "tools.audit"),
    }
    yield Deployment(env, token, db, tmp_path / "tools.audit", tmp_path / "gunicorn.log")
    db.dispose()

"""Every path that starts model work passes the same per-user limits, on SQLite and PostgreSQL:
continuations after a decision, queued turns' promotions and the upkeep's stranded pass."""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select, update

from demo_data.generator import seed_finance
from engine.limits import Admission, Limits
from engine.store.turn_rows import insert_turn
from engine.store.turns import TurnStore
from engine.store.workers import WorkerRegistry
from models import Message, ToolRun, Turn, new_id
from models.chat import TURN_QUEUED
from models.db import Database
from services.sessions import create_session
from tests.backends import migrated_postgres
from tests.live import LiveServer, decode
from tests.waits import wait_until

RAISE = "Raise my groceries budget to 400"
SLOW = "What did I spend on groceries last month?"
BUDGET = 10**7  # USER_DAILY_TOKENS here: no demo turn comes near it on its own


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(
    request: pytest.FixtureRequest, migrated_template: Path, tmp_path: Path
) -> Iterator[str]:
    """A fresh migrated database of each kind."""
    if request.param == "sqlite":
        path = tmp_path / "test.db"
        shutil.copy(migrated_template, path)
        yield f"sqlite:///{path}"
        return
    with migrated_postgres() as url:
        yield url


@pytest.fixture
def app_config(app_config: dict[str, Any]) -> dict[str, Any]:
    """The default running limit, a daily budget far away, timings at 1/2.

    Not less: the database's own deadlines scale too (a lock wait gives up after 1.5 s
    here), while eight decisions at once really queue for the user's row; at 1/4 a loaded
    2-core machine let the eighth wait past 0.75 s now and then (a 503, as designed).
    """
    return {
        **app_config,
        "TIME_SCALE": 0.5,
        "USER_MAX_CONCURRENT_TURNS": 4,
        "USER_DAILY_TOKENS": BUDGET,
    }


@pytest.fixture
def seeded(live: LiveServer, user: tuple[int, str]) -> LiveServer:
    """The live server with a user who has budgets to change."""
    seed_finance(live.app.extensions["db"], user[0], months=3, seed=5)
    return live


class Calls:
    """Counts the model calls of a live server, and what each was asked last."""

    def __init__(self, live: LiveServer) -> None:
        self.asked: list[str] = []
        model = live.app.extensions["turns"].deps.model
        real = model.request

        def spy(
            messages: list[dict[str, Any]], tools: list[dict[str, Any]], **shape: Any
        ) -> dict[str, Any]:
            said = [m for m in messages if m["role"] != "system"]  # not the notes
            self.asked.append(str(said[-1]["content"]) if said else "")
            return real(messages, tools, **shape)

        model.request = spy


def pace(live: LiveServer, delay: float) -> None:
    """Seconds between the demo model's stream events: turns last long enough to overlap."""
    live.app.extensions["turns"].deps.model.demo_pace.delay = delay


def session(live: LiveServer) -> str:
    return live.post("/api/sessions").json()["id"]


def paused(live: LiveServer) -> tuple[str, str]:
    """A new session's turn paused on a set_budget call; return (turn id, tool_use id)."""
    sid = session(live)
    turn = live.post(f"/api/sessions/{sid}/turns", json={"message": RAISE}).json()
    events = decode(live.read_events(f"/api/turns/{turn['turn_id']}/events"))
    assert events[-1][2]["status"] == "awaiting_approval", events[-3:]
    [request] = [d for _, t, d in events if t == "approval_requested"]
    return turn["turn_id"], request["tool_use_id"]


def spend_the_budget(live: LiveServer, user_id: int) -> None:
    """Make today's usage cross USER_DAILY_TOKENS, as a long answer would (on a question:
    no running turn rewrites it)."""
    with live.app.extensions["db"].transaction() as s:
        first = s.scalar(
            select(Message.id)
            .join(Turn, Turn.id == Message.turn_id)
            .where(Turn.user_id == user_id, Message.role == "user")
            .order_by(Message.created_at)
            .limit(1)
        )
        s.execute(update(Message).where(Message.id == first).values(usage={"input_tokens": BUDGET}))


def running_turns(live: LiveServer, user_id: int) -> int:
    with live.app.extensions["db"].read() as s:
        return s.scalar(
            select(func.count())
            .select_from(Turn)
            .where(Turn.user_id == user_id, Turn.status == "running")
        )


def test_eight_approvals_at_once_run_at_most_four_turns_and_all_of_them(
    seeded: LiveServer, user: tuple[int, str]
) -> None:
    requests = [paused(seeded) for _ in range(8)]
    pace(seeded, 0.01)
    most, done = 0, threading.Event()

    def watch() -> None:
        nonlocal most
        while not done.is_set():  # sampling the whole time, not waiting for anything
            most = max(most, running_turns(seeded, user[0]))
            time.sleep(0.002)

    watcher = threading.Thread(target=watch)
    watcher.start()
    answers: list[Any] = [None] * 8
    gate = threading.Barrier(8)

    def approve(i: int) -> None:
        turn_id, tool_use_id = requests[i]
        gate.wait()
        answers[i] = seeded.post(
            f"/api/turns/{turn_id}/approvals", json={"tool_use_id": tool_use_id, "approved": True}
        )

    deciders = [threading.Thread(target=approve, args=(i,)) for i in range(8)]
    try:
        for t in deciders:
            t.start()
        for t in deciders:
            t.join()
        assert [a.status_code for a in answers] == [200] * 8, [a.text for a in answers]
        following = [a.json()["continuation_turn_id"] for a in answers]
        ends = [decode(seeded.read_events(f"/api/turns/{t}/events"))[-1] for t in following]
    finally:
        done.set()
        watcher.join()
    assert [e[2]["status"] for e in ends] == ["completed"] * 8, "every continuation ran"
    assert 1 <= most <= 4, f"{most} turns ran at once under USER_MAX_CONCURRENT_TURNS=4"
    with seeded.app.extensions["db"].read() as s:
        ran = s.scalars(select(ToolRun.status).where(ToolRun.name == "set_budget")).all()
    assert ran == ["done"] * 8


def test_decisions_over_the_daily_budget_are_refused_and_make_no_model_call(
    seeded: LiveServer, user: tuple[int, str]
) -> None:
    requests = [paused(seeded) for _ in range(3)]
    calls = Calls(seeded)
    spend_the_budget(seeded, user[0])
    with seeded.app.extensions["db"].read() as s:
        turns_before = s.scalar(select(func.count()).select_from(Turn))
    for turn_id, tool_use_id in requests:
        for approved in (True, False):  # a decline would start model work too
            response = seeded.post(
                f"/api/turns/{turn_id}/approvals",
                json={"tool_use_id": tool_use_id, "approved": approved},
            )
            assert response.status_code == 429, response.text
            assert response.json()["error"]["code"] == "daily_token_limit"
            assert int(response.headers["Retry-After"]) >= 1
        stored = seeded.get(f"/api/turns/{turn_id}/approvals").json()["approvals"]
        assert [a["approval"] for a in stored] == [None], "the approval stays pending"
    with seeded.app.extensions["db"].read() as s:
        assert s.scalar(select(func.count()).select_from(Turn)) == turns_before
    assert calls.asked == []
    # Once tomorrow comes (here: the usage is gone), the same decision goes through.
    with seeded.app.extensions["db"].transaction() as s:
        s.execute(update(Message).values(usage=None))
    turn_id, tool_use_id = requests[0]
    body = {"tool_use_id": tool_use_id, "approved": True}
    decided = seeded.post(f"/api/turns/{turn_id}/approvals", json=body).json()
    events = decode(seeded.read_events(f"/api/turns/{decided['continuation_turn_id']}/events"))
    assert events[-1][2]["status"] == "completed" and calls.asked


def test_a_queued_turn_promoted_after_the_budget_was_spent_fails_without_a_model_call(
    live: LiveServer, user: tuple[int, str]
) -> None:
    pace(live, 0.01)
    calls = Calls(live)
    sid = session(live)
    first = live.post(f"/api/sessions/{sid}/turns", json={"message": SLOW}).json()
    second = live.post(f"/api/sessions/{sid}/turns", json={"message": "And my budgets?"}).json()
    assert (first["status"], second["status"]) == ("running", "queued")
    spend_the_budget(live, user[0])  # the running turn crosses the budget
    assert decode(live.read_events(f"/api/turns/{first['turn_id']}/events"))[-1][2]["status"] == (
        "completed"
    )
    events = decode(live.read_events(f"/api/turns/{second['turn_id']}/events"))
    assert [t for _, t, _ in events] == ["turn_start", "turn_error", "turn_end"]
    assert events[1][2]["code"] == "daily_token_limit" and events[-1][2]["status"] == "failed"
    shown = live.get(f"/api/turns/{second['turn_id']}").json()
    assert shown["status"] == "failed" and shown["error"]["code"] == "daily_token_limit"
    assert not any("And my budgets?" in asked for asked in calls.asked), "no model call"
    assert live.get(f"/api/sessions/{sid}").json()["queued"] == []


def test_the_stranded_pass_starts_nothing_over_the_limit_and_a_turns_end_frees_a_place(
    db: Database, user: tuple[int, str]
) -> None:
    turns, worker = (
        TurnStore(db, Admission(Limits(max_running=1, retry_after=5.0))),
        WorkerRegistry(db),
    )
    worker.register()
    busy = create_session(db, user[0])["id"]
    _, lease, _ = turns.start_turn(user[0], busy, "one", worker.worker_id)
    # A turn waiting for a place in another session (as a continuation may).
    idle, waiting = create_session(db, user[0])["id"], new_id("turn")
    with db.begin() as conn:
        insert_turn(conn, waiting, idle, user[0], TURN_QUEUED, None, None)
    assert turns.stranded(worker.worker_id, 16) == [], "no place: it waits"
    with db.read() as s:
        assert s.scalar(select(Turn.status).where(Turn.id == waiting)) == TURN_QUEUED
    # The running turn's end, in another session, starts it in the same transaction.
    [started] = turns.finish_turn(lease, "completed", 1, worker_id=worker.worker_id)
    assert started.turn.turn_id == waiting and started.turn.session_id == idle
    assert turns.stranded(worker.worker_id, 16) == []


def test_an_identical_decision_forty_times_on_two_workers_is_audited_once(
    seeded: LiveServer, app_config: dict[str, Any]
) -> None:
    import logging

    from app import create_app
    from telemetry import audit

    turn_id, tool_use_id = paused(seeded)
    other = create_app(app_config)  # a second worker on the same database
    trail: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: trail.append(record.getMessage())  # type: ignore[method-assign]
    level = audit.AUDIT.level
    audit.AUDIT.addHandler(handler)
    audit.AUDIT.setLevel(logging.INFO)
    body = {"tool_use_id": tool_use_id, "approved": True}
    clients = [seeded.http, other.test_client()]
    gate = threading.Barrier(8)
    codes: list[int] = []

    def post(i: int) -> None:
        gate.wait()
        for _ in range(5):
            client = clients[i % 2]
            headers = {} if client is seeded.http else seeded.headers
            response = client.post(f"/api/turns/{turn_id}/approvals", json=body, headers=headers)
            codes.append(response.status_code)

    posters = [threading.Thread(target=post, args=(i,)) for i in range(8)]
    try:
        for t in posters:
            t.start()
        for t in posters:
            t.join()
        following = seeded.get(f"/api/turns/{turn_id}").json()["continued_by"]
        assert following is not None
        wait_until(
            lambda: (
                seeded.get(f"/api/turns/{following}").json()["status"] not in ("queued", "running")
            ),
            timeout=30,
            message="the continuation did not end",
            every=0.05,
        )
    finally:
        audit.AUDIT.removeHandler(handler)
        audit.AUDIT.setLevel(level)
        other.extensions["engine"].close()
        other.extensions["db"].dispose()
    assert codes == [200] * 40
    decided = [line for line in trail if '"event":"approval_decided"' in line]
    assert len(decided) == 1, decided

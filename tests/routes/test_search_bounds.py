"""Search bounded in work and time whatever the query, on SQLite and PostgreSQL alike.

A user with 20,000 sessions (inserted in bulk, as the app writes them) is searched for
queries that used to walk everything: the dotless i (U+0131, whose upper case matched nearly every
title), `type` (a key of every stored block), a letter in every title, and a miss.
"""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx2
import pytest
from sqlalchemy import insert

from models import ChatSession, Message
from models.db import Database
from models.searchable import search_text, search_title
from services.search import SearchBudget, SearchGate, search_sessions
from tests.backends import migrated_postgres
from tests.conftest import app_settings, close_app, make_user
from tests.live import LiveServer

SESSIONS = 20_000
# A time bound: the search's own budget is 0.5 s (SEARCH_BUDGET_SECONDS); one second leaves
# room for the request around it on a loaded machine. Before the rework the dotless i took 6.4 s.
ANSWER_WITHIN = 1.0
BASE = datetime(2025, 1, 1, tzinfo=UTC)
DOTLESS_I = "\u0131"
IGDIR = "I\u011fd\u0131r"  # a town whose name has a dotless i


def seed(db: Database, user_id: int, count: int, prefix: str = "a") -> dict[str, set[str]]:
    """`count` sessions of one message each, newest last; return the ids each query finds."""
    sessions, messages = [], []
    expected: dict[str, set[str]] = {DOTLESS_I: set(), "groceries": set(), "note": set()}
    for n in range(count):
        sid = f"ses_{prefix}{n:023d}"
        title = f"Groceries plan {n}" if n % 1000 == 0 else f"Chat {n}"
        words = f"Note {n}: isn't it nice" + (f", the trip to {IGDIR}" if n % 2500 == 7 else "")
        content = [
            {"type": "text", "text": words},
            {"type": "tool_use", "id": f"t{n}", "name": "x", "input": {"type": "zebra"}},
        ]
        sessions.append(
            {
                "id": sid,
                "user_id": user_id,
                "title": title,
                "search_title": search_title(title),
                "created_at": BASE + timedelta(seconds=n),
            }
        )
        messages.append(
            {
                "id": f"msg_{prefix}{n:023d}",
                "session_id": sid,
                "position": 0,
                "role": "assistant",
                "status": "complete",
                "content": content,
                "search_text": search_text(content),
            }
        )
        if IGDIR in words:
            expected[DOTLESS_I].add(sid)
        if n % 1000 == 0:
            expected["groceries"].add(sid)
        expected["note"].add(sid)
    with db.begin() as conn:
        conn.execute(insert(ChatSession.__table__), sessions)
        conn.execute(insert(Message.__table__), messages)
    return expected


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def backend(
    request: pytest.FixtureRequest,
    migrated_template: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Any]:
    """The app on a migrated SQLite file, or on a fresh PostgreSQL database: one per module
    and backend, as the tests that take it only read."""
    from app import create_app

    folder = tmp_path_factory.mktemp("search")
    with ExitStack() as stack:
        if request.param == "sqlite":
            shutil.copy(migrated_template, folder / "search.db")
            url = f"sqlite:///{folder / 'search.db'}"
        else:
            url = stack.enter_context(migrated_postgres())
        app = create_app(app_settings(url, folder))
        yield app
        close_app(app)


@pytest.fixture(scope="module")
def seeded(backend: Any) -> tuple[Any, dict[str, str], dict[str, set[str]], Database, int]:
    """Alice with 20,000 sessions, Mallory with matching ones of her own: seeded once per
    backend, for tests that only read them."""
    db = backend.extensions["db"]
    alice, token = make_user(db, "alice")
    mallory, _ = make_user(db, "mallory")
    expected = seed(db, alice, SESSIONS)
    seed(db, mallory, 3000, prefix="m")
    return backend.test_client(), {"Authorization": f"Bearer {token}"}, expected, db, alice


def timed_get(client: Any, auth: dict[str, str], **query: Any) -> dict[str, Any]:
    started = time.monotonic()
    response = client.get("/api/sessions", query_string=query, headers=auth)
    took = time.monotonic() - started
    assert response.status_code == 200, response.get_data(as_text=True)
    assert took < ANSWER_WITHIN, (query, took)
    return response.get_json()


def walk(client: Any, auth: dict[str, str], q: str, limit: int = 100) -> list[str]:
    """Every page of a search, each answered in time; the ids found, in order."""
    found: list[str] = []
    cursor = None
    for _ in range(SESSIONS):
        page = timed_get(client, auth, q=q, limit=limit, **({"cursor": cursor} if cursor else {}))
        found += [s["id"] for s in page["sessions"]]
        cursor = page["next_cursor"]
        if cursor is None:
            return found
        assert page["partial"] or len(page["sessions"]) == limit
    raise AssertionError("the walk never ended")


def newest_first(ids: set[str]) -> list[str]:
    return sorted(ids, reverse=True)  # ids grow with created_at here


@pytest.mark.slow  # a time bound (ANSWER_WITHIN), over 10 s
def test_any_query_over_20000_sessions_answers_in_time_and_finds_the_right_sessions(
    seeded: Any,
) -> None:
    client, auth, expected, _, _ = seeded
    assert walk(client, auth, DOTLESS_I) == newest_first(expected[DOTLESS_I])
    assert walk(client, auth, "type") == []  # a key of every stored block, never matched
    assert walk(client, auth, "zebra") == []  # only inside a tool's input
    assert walk(client, auth, "no such words") == []
    assert walk(client, auth, "GROCERIES") == newest_first(expected["groceries"])
    first = timed_get(client, auth, q="a", limit=100)  # in every title ("Chat", "plan")
    assert [s["id"] for s in first["sessions"]] == newest_first(expected["note"])[:100]
    assert first["next_cursor"] and not first["partial"]
    assert first["sessions"][0]["match"] == {"in": "title", "snippet": "Chat 19999"}
    trip = timed_get(client, auth, q=IGDIR.lower())["sessions"]
    assert trip[0]["match"] == {
        "in": "messages",
        "snippet": f"Note 17507: isn't it nice, the trip to {IGDIR}",
    }


def test_partial_pages_carry_a_cursor_and_the_walk_finds_everything_once(seeded: Any) -> None:
    _, _, expected, db, alice = seeded
    budget = SearchBudget(seconds=5.0, sessions=700)
    found: list[str] = []
    partial_pages = 0
    after = None
    while True:
        page = search_sessions(db, alice, "groceries", 4, after, budget)
        found += [s["id"] for s in page.sessions]
        partial_pages += page.partial
        if page.next_key is None:
            break
        assert page.partial or len(page.sessions) == 4
        after = page.next_key
    assert found == newest_first(expected["groceries"])
    assert partial_pages >= SESSIONS // 700 - 4  # most pages stopped at the budget


def test_a_spent_time_budget_answers_at_once_and_still_moves_on(seeded: Any) -> None:
    _, _, _, db, alice = seeded
    page = search_sessions(db, alice, "no such words", 10, None, SearchBudget(0.0001, 10_000))
    assert page.partial and page.sessions == []
    # It moved on (past the newest session) and answered at once: after its first windows
    # (1, 2, 4 sessions), not after thousands.
    assert page.next_key is not None
    assert f"ses_a{SESSIONS - 8:023d}" <= page.next_key[1] <= f"ses_a{SESSIONS - 1:023d}"


def test_search_gate_refuses_over_its_caps_with_429_and_frees_its_places() -> None:
    from domain.errors import LimitExceeded

    gate = SearchGate(per_user=2, total=3, retry_after=1.0, budget=SearchBudget(0.5, 10_000))
    with gate.enter(1), gate.enter(1):
        with pytest.raises(LimitExceeded) as refused, gate.enter(1):
            pass
        assert refused.value.code == "search_busy" and refused.value.details == {"limit": 2}
        with gate.enter(2), pytest.raises(LimitExceeded), gate.enter(3):
            pass  # the process-wide cap
    with gate.enter(1), gate.enter(1):  # every place was given back
        pass


def test_a_search_over_the_cap_is_429_with_retry_after(client: Any, user: Any) -> None:
    auth = {"Authorization": f"Bearer {user[1]}"}
    gate = client.application.extensions["search_gate"]
    with gate.enter(user[0]), gate.enter(user[0]):
        response = client.get("/api/sessions", query_string={"q": "x"}, headers=auth)
        assert response.status_code == 429
        assert response.headers["Retry-After"] == "1"
        assert response.get_json()["error"]["code"] == "search_busy"
        assert client.get("/api/sessions", headers=auth).status_code == 200  # the list is not
    assert client.get("/api/sessions", query_string={"q": "x"}, headers=auth).status_code == 200


@pytest.mark.slow  # a time bound (ANSWER_WITHIN)
def test_sixteen_searches_of_one_user_never_delay_another_users_list(
    app: Any, db: Database, user: tuple[int, str]
) -> None:
    seed(db, user[0], SESSIONS)
    _, bob = make_user(db, "bob")
    live = LiveServer(app, user[1])
    stop = threading.Event()
    codes: list[int] = []

    def search_forever() -> None:
        with httpx2.Client(base_url=live.url, headers=live.headers, timeout=60) as http:
            while not stop.is_set():
                codes.append(http.get("/api/sessions", params={"q": DOTLESS_I}).status_code)

    searchers = [threading.Thread(target=search_forever) for _ in range(16)]
    try:
        for thread in searchers:
            thread.start()
        waits = []
        with httpx2.Client(base_url=live.url, timeout=60) as other:
            for _ in range(10):
                started = time.monotonic()
                listed = other.get(
                    "/api/sessions", params={"limit": 5}, headers={"Authorization": f"Bearer {bob}"}
                )
                waits.append(time.monotonic() - started)
                assert listed.status_code == 200
                time.sleep(0.1)  # Bob asks now and then: the scenario
    finally:
        stop.set()
        for thread in searchers:
            thread.join(60)
        live.close()
    # A time bound: Bob's list takes milliseconds; before the rework it waited 59 s.
    assert max(waits) < ANSWER_WITHIN, waits
    assert set(codes) == {200, 429} and codes.count(200) >= 2

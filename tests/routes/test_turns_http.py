"""The HTTP API over a real loopback server: turns, events, reconnects, cancel, isolation."""

from __future__ import annotations

import time
from typing import Any

import httpx2
import itsdangerous.timed
import pytest

from tests.conftest import make_user
from tests.engine.test_leases import count_statements
from tests.helpers import assert_well_formed, text_of
from tests.live import LiveServer, decode, events_only
from tests.waits import PATIENCE

QUESTION = "What did I spend on groceries last month?"


def finished_turn(live: LiveServer, question: str = QUESTION) -> tuple[dict[str, Any], bytes]:
    """Run a turn to its end; return the 202 body and its full event stream."""
    turn = live.start_turn(question)
    raw = live.read_events(f"/api/turns/{turn['turn_id']}/events")
    return turn, raw


def test_a_turn_streams_explicit_events_and_is_stored(live: LiveServer) -> None:
    turn, raw = finished_turn(live)
    events = decode(raw)
    assert_well_formed(events)
    assert events[-1][2] == {"turn_id": turn["turn_id"], "status": "completed"}
    kinds = {t for _, t, _ in events}
    assert {
        "message_start",
        "block_start",
        "block_delta",
        "block_end",
        "tool_result",
        "message_end",
    } <= kinds
    assert text_of(events) and demo_answered(events)
    session = live.get(f"/api/sessions/{turn['session_id']}").json()
    roles = [m["role"] for m in session["messages"]]
    assert roles[0] == "user" and roles[-1] == "assistant" and len(roles) >= 4
    assert live.get(f"/api/turns/{turn['turn_id']}").json()["status"] == "completed"


@pytest.mark.slow  # a reconnect at each of a turn's events: over 10 s
def test_reconnect_at_every_event_index_replays_exactly_the_rest(live: LiveServer) -> None:
    turn, raw = finished_turn(live)
    full = events_only(raw)
    frames = decode(full)
    path = f"/api/turns/{turn['turn_id']}/events"
    for n in range(len(frames) + 1):
        rest = events_only(live.read_events(path, last_event_id=n))
        assert full.endswith(rest) and len(decode(rest)) == len(frames) - n, n
        assert events_only(live.read_events(f"{path}?last_event_id={n}")) == rest


def test_get_turn_gives_a_fresh_signed_events_url(
    live: LiveServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    turn, raw = finished_turn(live)
    age = live.app.config["SETTINGS"].timings.events_token_max_age
    real = time.time
    monkeypatch.setattr(itsdangerous.timed.time, "time", lambda: real() + age + 5)
    stale = httpx2.get(live.url + turn["events_url"], timeout=10)
    assert stale.status_code == 401 and stale.json()["error"]["code"] == "token_expired"
    shown = live.get(f"/api/turns/{turn['turn_id']}").json()
    response = httpx2.get(live.url + shown["events_url"], timeout=10)
    assert response.status_code == 200 and response.content == events_only(raw)


def test_a_reconnect_after_turn_end_gets_204_so_eventsource_stops(live: LiveServer) -> None:
    turn, raw = finished_turn(live)
    last = decode(events_only(raw))[-1][0]
    path = f"/api/turns/{turn['turn_id']}/events"
    for params, headers in (({}, {"Last-Event-ID": str(last)}), ({"last_event_id": last}, {})):
        response = live.http.get(path, params=params, headers=headers)
        assert response.status_code == 204 and response.content == b""
    # One event short of the end still streams that event.
    response = live.http.get(path, headers={"Last-Event-ID": str(last - 1)})
    assert response.status_code == 200 and decode(response.content)[0][1] == "turn_end"


@pytest.mark.slow  # 7.7 s with 2 workers on a quiet machine, over 10 s alone
def test_dropping_the_connection_after_every_event_of_a_live_turn_loses_nothing(
    live: LiveServer,
) -> None:
    live.app.extensions["turns"].deps.model.demo_pace.delay = 0.002
    turn = live.start_turn(QUESTION)
    path = f"/api/turns/{turn['turn_id']}/events"
    stitched, last = b"", 0
    while True:
        piece = live.read_events(path, last_event_id=last, max_events=1)
        if not piece:
            break
        stitched += piece
        last = decode(piece)[-1][0]
        if decode(piece)[-1][1] == "turn_end":
            break
    assert stitched == events_only(live.read_events(path))
    assert_well_formed(decode(stitched))


def test_events_url_works_for_an_eventsource_without_headers(live: LiveServer) -> None:
    turn = live.start_turn(QUESTION)
    raw = live.read_events(turn["events_url"], auth=False)
    assert decode(raw)[-1][1] == "turn_end"
    other = live.start_turn("How are my budgets?")
    forged = other["events_url"].split("?")[0] + "?" + turn["events_url"].split("?")[1]
    response = live.get(forged, headers={"Authorization": ""})
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "invalid_token"


def test_second_turn_while_one_runs_is_409_when_asked_to_reject(live: LiveServer) -> None:
    live.app.extensions["turns"].deps.model.demo_pace.delay = 0.01
    turn = live.start_turn(QUESTION)
    again = live.post(
        f"/api/sessions/{turn['session_id']}/turns", json={"message": "hi", "if_busy": "reject"}
    )
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "turn_in_progress"
    live.read_events(f"/api/turns/{turn['turn_id']}/events")
    assert live.app.extensions["turns"].wait(turn["turn_id"])
    live.start_turn("And restaurants?", session_id=turn["session_id"])


def test_cancel_stops_the_turn_and_the_next_turn_works(live: LiveServer) -> None:
    live.app.extensions["turns"].deps.model.demo_pace.delay = 0.01
    turn = live.start_turn(QUESTION)
    live.read_events(f"/api/turns/{turn['turn_id']}/events", max_events=8)
    # The model now waits an hour before each event: only the cancel can end the turn.
    live.app.extensions["turns"].deps.model.demo_pace.delay = 3600
    assert live.post(f"/api/turns/{turn['turn_id']}/cancel").status_code == 202
    assert live.app.extensions["turns"].wait(turn["turn_id"], timeout=PATIENCE)
    events = decode(live.read_events(f"/api/turns/{turn['turn_id']}/events"))
    assert_well_formed(events)
    assert events[-1][2]["status"] == "cancelled"
    live.app.extensions["turns"].deps.model.demo_pace.delay = 0
    nxt = live.start_turn("How are my budgets?", session_id=turn["session_id"])
    assert (
        decode(live.read_events(f"/api/turns/{nxt['turn_id']}/events"))[-1][2]["status"]
        == "completed"
    )


def test_chat_stream_answers_in_one_request(live: LiveServer) -> None:
    with live.http.stream("POST", "/api/chat/stream", json={"message": QUESTION}) as response:
        assert response.status_code == 200
        assert response.headers["cache-control"] == "no-store"
        assert response.headers["x-accel-buffering"] == "no"
        raw = response.read()
        session_id = response.headers["x-session-id"]
    events = decode(raw)
    assert_well_formed(events)
    assert events[0][2]["session_id"] == session_id
    again = live.post(
        "/api/chat/stream", json={"message": "And last year?", "session_id": session_id}
    )
    assert decode(again.content)[-1][2]["status"] == "completed"
    messages = live.get(f"/api/sessions/{session_id}").json()["messages"]
    assert (
        sum(
            1
            for m in messages
            if m["role"] == "user"
            and m["content"][0]["type"] == "text"
            and "tool_result" not in str(m["content"])
        )
        == 2
    )


def test_users_only_see_their_own_sessions_and_turns(live: LiveServer) -> None:
    turn, _ = finished_turn(live)
    _, bob_token = make_user(live.app.extensions["db"], "bob")
    bob = {"Authorization": f"Bearer {bob_token}"}
    for method, path in [
        ("GET", f"/api/sessions/{turn['session_id']}"),
        ("DELETE", f"/api/sessions/{turn['session_id']}"),
        ("GET", f"/api/turns/{turn['turn_id']}"),
        ("GET", f"/api/turns/{turn['turn_id']}/events"),
        ("POST", f"/api/turns/{turn['turn_id']}/cancel"),
    ]:
        response = live.http.request(method, path, headers=bob)
        assert response.status_code == 404, (method, path)
        assert response.json()["error"]["code"] == "not_found"
    assert live.get("/api/sessions", headers=bob).json() == {
        "sessions": [],
        "next_cursor": None,
        "partial": False,
    }
    response = live.post(
        f"/api/sessions/{turn['session_id']}/turns", json={"message": "x"}, headers=bob
    )
    assert response.status_code == 404


def test_delete_session_removes_it(live: LiveServer) -> None:
    turn, _ = finished_turn(live)
    assert live.http.delete(f"/api/sessions/{turn['session_id']}").status_code == 204
    assert live.get(f"/api/sessions/{turn['session_id']}").status_code == 404


def test_health(live: LiveServer) -> None:
    response = live.get("/healthz")
    assert response.status_code == 200 and response.json() == {"status": "ok"}


def test_many_sessions_stream_at_once_independently(live: LiveServer) -> None:
    from concurrent.futures import ThreadPoolExecutor

    live.app.extensions["turns"].deps.model.demo_pace.delay = 0.001
    questions = [
        "What did I spend on groceries last month?",
        "Am I over budget anywhere?",
        "Which subscriptions am I paying for?",
        "What are my account balances?",
    ] * 4

    def one(question: str) -> list[Any]:
        turn = live.start_turn(question)
        return decode(live.read_events(f"/api/turns/{turn['turn_id']}/events"))

    with ThreadPoolExecutor(max_workers=16) as pool:
        results = list(pool.map(one, questions))
    for events in results:
        assert_well_formed(events)
        assert events[-1][2]["status"] == "completed"
        assert text_of(events) and demo_answered(events)
    # Same question, same data: the same answer, whatever ran beside it.
    assert len({text_of(e) for e in results[0::4]}) == 1


def test_idle_streams_get_keep_alive_comments(
    app_config: dict[str, Any], user: tuple[int, str]
) -> None:
    from app import create_app

    # Every timing at 1/20 (keep-alive every 0.75 s; stalls are noticed after 3 s), and a
    # model that sends an event a second.
    app = create_app({**app_config, "TIME_SCALE": 0.05, "DEMO_EVENT_DELAY": 1.0})
    live = LiveServer(app, user[1])
    try:
        turn = live.start_turn("Which subscriptions am I paying for?")
        with live.http.stream("GET", f"/api/turns/{turn['turn_id']}/events") as response:
            seen = b""
            for chunk in response.iter_raw():
                seen += chunk
                if b": keep-alive\n\n" in seen:
                    break
        assert b": keep-alive\n\n" in seen
        app.extensions["turns"].cancel(turn["turn_id"])
        assert app.extensions["turns"].wait(turn["turn_id"])
    finally:
        live.close()
        app.extensions["engine"].close()


def test_reads_of_turns_and_sessions_never_write(live: LiveServer) -> None:
    turn = live.start_turn("Which subscriptions am I paying for?")
    assert live.app.extensions["turns"].wait(turn["turn_id"])
    db = live.app.extensions["db"]
    reads = [
        lambda: live.get(f"/api/turns/{turn['turn_id']}"),
        lambda: live.get(f"/api/sessions/{turn['session_id']}"),
        lambda: live.get("/api/sessions"),
        lambda: live.read_events(f"/api/turns/{turn['turn_id']}/events"),
    ]
    for read in reads:
        assert count_statements(db, read) == []


def demo_answered(events: list[tuple[int, str, dict[str, Any]]]) -> bool:
    """Whether the offline demo model wrote the answer (its messages name it as their model)."""
    models = {d.get("model") for _, kind, d in events if kind == "message_start"}
    return models == {"offline demo model"}

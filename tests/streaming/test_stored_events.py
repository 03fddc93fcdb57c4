"""One derivation of stored rows into events: every view of storage ends where the live stream did.

Stored rows -> events (streaming/wire/stored.py) -> what a client shows (TurnView) equals what the
live stream's events showed, for generated turns and for a real turn of the demo model, read
back through the session API (`?events=true`, the page's history) and the replay of a turn
whose log is lost.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings

from demo_data.generator import seed_finance
from engine.events.replay import replay_turn
from models.db import Database
from streaming.wire import stored
from streaming.wire.events import Event
from streaming.wire.protocol import decode_stream
from streaming.wire.stored import StoredMessage
from streaming.wire.view import TurnView
from tests.aisdk.turns import Turn, turns

FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def shown(events: list[tuple[str, dict[str, Any]]] | list[Event]) -> list[Any]:
    """What a client shows after these events: each message kept, its blocks' text, its end."""
    view = TurnView()
    for seq, (kind, data) in enumerate(events, 1):
        view.apply(seq, kind, data)
    messages = [
        (m, dict(view.messages[m].text), view.messages[m].ended, view.messages[m].open_blocks)
        for m in view.order
        if not view.messages[m].discarded
    ]
    return [messages, view.tool_results, view.status]


def from_rows(turn: Turn) -> list[Event]:
    """The turn as the page draws it from storage: its start, its rows' events, its end."""
    rows: list[StoredMessage] = turn.rows[1:]  # type: ignore[assignment]
    events: list[Any] = [turn.events[0]]
    for derived in stored.row_events(rows):
        events += derived
    return [*events, *turn.events[-2 if turn.error else -1 :]]


@FAST
@given(turns())
def test_a_stored_turn_shows_what_its_live_stream_showed(turn: Turn) -> None:
    assert shown(from_rows(turn)) == shown(turn.events)


def test_a_question_and_a_discarded_attempt_show_nothing() -> None:
    question: StoredMessage = {
        "id": "q",
        "role": "user",
        "content": [{"type": "text", "text": "x"}],
    }
    lost: StoredMessage = {"id": "a", "role": "assistant", "content": [], "status": "discarded"}
    assert stored.row_events([question, lost]) == [[], []]


def test_a_block_starts_as_it_started_live_and_a_cut_call_ends_cut() -> None:
    cut = {"problem": "input was not valid JSON", "quoted": '"{"', "cut": True}
    call = {"type": "tool_use", "id": "t1", "name": "calc", "input": {}, "input_error": cut}
    text = {"type": "text", "text": "Hi", "citations": [{"source": "txn:1"}]}
    row: StoredMessage = {"id": "m", "role": "assistant", "content": [text, call]}
    events = stored.message_events(row)
    starts = [data for kind, data in events if kind == "block_start"]
    assert [s["block"] for s in starts] == [
        {"type": "text", "text": ""},
        {"type": "tool_use", "id": "t1", "name": "calc", "input": {}},
    ]
    assert (starts[1]["tool_use_id"], starts[1]["name"]) == ("t1", "calc")
    ends = [data for kind, data in events if kind == "block_end"]
    assert ends[0]["citations"] == text["citations"] and "incomplete" not in ends[0]
    assert ends[1]["incomplete"] and ends[1]["error"] == "input was not valid JSON"


def test_a_real_turn_reads_back_as_it_streamed(client: Any, db: Database, user: Any) -> None:
    seed_finance(db, user[0], months=3, seed=5)
    auth = {"Authorization": f"Bearer {user[1]}"}
    question = {"message": "What did I spend on groceries last month?"}
    response = client.post("/api/chat/stream", json=question, headers=auth)
    live = [(kind, data) for _, kind, data in decode_stream(response.get_data())]
    assert any(kind == "tool_result" for kind, _ in live), "the demo model called a tool"
    session_id = response.headers["X-Session-Id"]
    detail = client.get(f"/api/sessions/{session_id}?events=true", headers=auth).get_json()
    page = [live[0]] + [(k, d) for m in detail["messages"] for k, d in m["events"]] + live[-1:]
    assert shown(page) == shown(live)
    paged = client.get(f"/api/sessions/{session_id}/messages?events=true", headers=auth)
    assert [m["events"] for m in paged.get_json()["messages"]] == [
        m["events"] for m in detail["messages"]
    ]
    plain = client.get(f"/api/sessions/{session_id}", headers=auth).get_json()
    assert all("events" not in m for m in plain["messages"]), "only when asked"
    replayed = decode_stream(replay_turn(db, response.headers["X-Turn-Id"], 0).frames)
    assert shown([(kind, data) for _, kind, data in replayed]) == shown(live)

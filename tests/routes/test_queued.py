"""A message sent while a turn runs: rejected, queued behind it, or interrupting it."""

from __future__ import annotations

from tests.live import LiveServer
from tests.routes.control import Chat

SLOW = "What did I spend on groceries last month?"


def slow(live: LiveServer) -> None:
    """Pace the demo model so a turn is still running when the next message arrives."""
    live.app.extensions["turns"].deps.model.demo_pace.delay = 0.01


def test_a_queued_message_is_answered_after_the_running_turn(live: LiveServer) -> None:
    slow(live)
    chat = Chat(live)
    first = chat.send({"message": SLOW})
    queued = chat.send({"message": "And my budgets?"})  # the default policy: queue
    assert queued["status"] == "queued" and first["status"] == "running"
    waiting = chat.session()["queued"]
    assert [(q["turn_id"], q["text"]) for q in waiting] == [(queued["turn_id"], "And my budgets?")]
    assert queued["user_message_id"] not in {m["id"] for m in chat.session()["messages"]}

    # Its events can be read at once: they start when it runs, after the first one ended.
    second_events = chat.events(queued["turn_id"])
    first_events = chat.events(first["turn_id"])
    assert first_events[-1][2]["status"] == "completed"
    assert second_events[0][1] == "turn_start" and second_events[-1][2]["status"] == "completed"
    texts = [t for role, t in chat.texts() if role == "user"]
    assert texts == [SLOW, "And my budgets?"], "the queued question follows the first answer"
    assert chat.session()["queued"] == []
    assert live.get(f"/api/turns/{queued['turn_id']}").json()["status"] == "completed"


def test_queued_messages_run_in_order_and_a_cancelled_one_is_removed(live: LiveServer) -> None:
    slow(live)
    chat = Chat(live)
    first = chat.send({"message": SLOW})
    a = chat.send({"message": "Question A"})
    b = chat.send({"message": "Question B"})
    c = chat.send({"message": "Question C"})
    cancelled = live.post(f"/api/turns/{b['turn_id']}/cancel")
    assert cancelled.status_code == 202
    ended = chat.events(b["turn_id"])
    assert [t for _, t, _ in ended] == ["turn_start", "turn_end"]
    assert ended[-1][2]["status"] == "cancelled"
    for turn in (first, a, c):
        assert chat.events(turn["turn_id"])[-1][2]["status"] == "completed"
    assert [t for role, t in chat.texts() if role == "user"] == [SLOW, "Question A", "Question C"]
    assert live.get(f"/api/turns/{b['turn_id']}").json()["status"] == "cancelled"


def test_reject_is_409_and_writes_nothing(live: LiveServer) -> None:
    slow(live)
    chat = Chat(live)
    first = chat.send({"message": SLOW})
    refused = chat.send({"message": "hi", "if_busy": "reject"}, status=409)
    assert refused["error"]["code"] == "turn_in_progress"
    assert chat.session()["queued"] == []
    chat.events(first["turn_id"])
    assert [t for role, t in chat.texts() if role == "user"] == [SLOW]


def test_interrupt_keeps_the_partial_answer_then_runs_the_new_message(live: LiveServer) -> None:
    slow(live)
    chat = Chat(live)
    first = chat.send({"message": SLOW})
    stream = live.read_events(f"/api/turns/{first['turn_id']}/events", max_events=12)
    assert stream, "the first turn has started streaming"
    second = chat.send({"message": "Never mind: show my accounts.", "if_busy": "interrupt"})
    assert second["status"] == "queued" and second["interrupted_turn_id"] == first["turn_id"]
    assert chat.events(first["turn_id"])[-1][2]["status"] == "cancelled"
    assert chat.events(second["turn_id"])[-1][2]["status"] == "completed"
    branch = chat.session()["messages"]
    roles = [(m["role"], m["status"]) for m in branch]
    assert roles[0] == ("user", "complete")
    # What the first turn wrote stays, marked incomplete where it was cut.
    kept = [m for m in branch if m["turn_id"] == first["turn_id"] and m["role"] == "assistant"]
    assert kept and all(m["status"] in ("complete", "incomplete") for m in kept)
    texts = [t for role, t in chat.texts() if role == "user"]
    assert texts == [SLOW, "Never mind: show my accounts."]


def test_a_full_queue_is_409(live: LiveServer) -> None:
    slow(live)
    chat = Chat(live)
    limit = live.app.extensions["turns"].deps.max_queued
    first = chat.send({"message": SLOW})
    for i in range(limit):
        chat.send({"message": f"q{i}"})
    full = chat.send({"message": "one too many"}, status=409)
    assert full["error"]["code"] == "queue_full"
    live.post(f"/api/turns/{first['turn_id']}/cancel")


def test_an_interrupting_message_runs_before_the_messages_already_queued(
    live: LiveServer,
) -> None:
    slow(live)
    chat = Chat(live)
    first = chat.send({"message": SLOW})
    a = chat.send({"message": "Question A"})
    b = chat.send({"message": "Question B"})
    now = chat.send({"message": "Stop: show my accounts.", "if_busy": "interrupt"})
    assert now["status"] == "queued" and now["interrupted_turn_id"] == first["turn_id"]
    session = chat.session()
    waiting = [q["turn_id"] for q in session["queued"]]
    if session["running_turn_id"] == now["turn_id"]:  # the first turn stopped already
        assert waiting == [a["turn_id"], b["turn_id"]], "it ran next"
    else:
        assert waiting == [now["turn_id"], a["turn_id"], b["turn_id"]], "it runs next"
    assert chat.events(first["turn_id"])[-1][2]["status"] == "cancelled"
    for turn in (now, a, b):
        assert chat.events(turn["turn_id"])[-1][2]["status"] == "completed"
    asked = [t for role, t in chat.texts() if role == "user"]
    assert asked == [SLOW, "Stop: show my accounts.", "Question A", "Question B"]
    # The model was asked in that order too: each request ends with the question it answers.
    last = [str(r[-1]["content"]) for r in chat.requests if r]
    firsts = {
        q: next(i for i, x in enumerate(last) if q in x)
        for q in ("Stop", "Question A", "Question B")
    }
    assert firsts["Stop"] < firsts["Question A"] < firsts["Question B"]

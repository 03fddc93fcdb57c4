"""A message sent with a `client_id` is asked once: sending it again (a client that lost the
reply, or got a 503 from a commit whose answer was lost) returns the turn it started."""

from __future__ import annotations

from typing import Any

from tests.live import LiveServer
from tests.routes.control import Chat
from tests.routes.test_queued import SLOW, slow

KEYS = ("turn_id", "session_id", "user_message_id", "status")


def same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return all(a[k] == b[k] for k in KEYS)


def test_a_message_sent_twice_starts_one_turn(live: LiveServer) -> None:
    slow(live)
    chat = Chat(live)
    first = chat.send({"message": SLOW, "client_id": "m-1"})
    again = chat.send({"message": SLOW, "client_id": "m-1"})
    assert first["status"] == "running" and same(first, again)
    assert chat.events(first["turn_id"])[-1][2]["status"] == "completed"
    late = chat.send({"message": SLOW, "client_id": "m-1"})  # after its turn ended
    assert late["turn_id"] == first["turn_id"]
    assert [t for role, t in chat.texts() if role == "user"] == [SLOW], "asked once"
    sent = [r for r in chat.requests if r]
    questions = [
        [b["text"] for m in r if m["role"] == "user" for b in m["content"] if b["type"] == "text"]
        for r in sent
    ]
    assert sent and all(q == [SLOW] for q in questions), "the model is asked it once"
    with_turns = live.get(f"/api/sessions/{chat.sid}/messages").json()["messages"]
    assert len({m["turn_id"] for m in with_turns}) == 1, "one turn"


def test_a_queued_message_sent_twice_waits_once_even_with_the_queue_full(
    live: LiveServer,
) -> None:
    slow(live)
    chat = Chat(live)
    first = chat.send({"message": SLOW})
    queued = chat.send({"message": "And my budgets?", "client_id": "m-2"})
    for i in range(live.app.extensions["turns"].deps.max_queued - 1):
        chat.send({"message": f"q{i}"})
    chat.send({"message": "one too many"}, status=409)
    again = chat.send({"message": "And my budgets?", "client_id": "m-2"})
    assert queued["status"] == "queued" and same(queued, again)
    waiting = [q["turn_id"] for q in chat.session()["queued"]]
    assert waiting.count(queued["turn_id"]) == 1 and len(waiting) == len(set(waiting))
    live.post(f"/api/turns/{first['turn_id']}/cancel")


def test_a_client_id_names_one_message(live: LiveServer) -> None:
    chat = Chat(live)
    first, _ = chat.ask({"message": "Which subscriptions am I paying for?", "client_id": "m-3"})
    before = chat.session()["messages"]
    reused = chat.send({"message": "Something else", "client_id": "m-3"}, status=409)
    assert reused["error"]["code"] == "client_id_reused"
    assert chat.session()["messages"] == before, "a refusal writes nothing"
    other = Chat(live)  # a client_id is per session
    elsewhere = other.send({"message": "Something else", "client_id": "m-3"})
    assert elsewhere["turn_id"] != first["turn_id"]
    live.post(f"/api/turns/{elsewhere['turn_id']}/cancel")


def test_a_client_id_goes_with_a_message(live: LiveServer) -> None:
    chat = Chat(live)
    _, events = chat.ask({"message": "Which subscriptions am I paying for?"})
    answer = next(m for m in chat.session()["messages"] if m["role"] == "assistant")["id"]
    refused = chat.send({"regenerate": answer, "client_id": "m-4"}, status=422)
    assert "client_id" in str(refused["error"])
    for bad in ("", "x" * 101, "a\x00b"):
        chat.send({"message": "hi", "client_id": bad}, status=422)
    assert events[-1][2]["status"] == "completed"

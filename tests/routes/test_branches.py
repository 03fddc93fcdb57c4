"""Edit and regenerate: every branch stays stored; the model sees only the active one."""

from __future__ import annotations

from typing import Any

from tests.live import LiveServer
from tests.routes.control import Chat

FIRST = "What did I spend on groceries last month?"
SECOND = "How are my budgets?"


def words(messages: list[dict[str, Any]]) -> str:
    """Every text the model was sent, as one string."""
    out = []
    for m in messages:
        content = m["content"]
        if isinstance(content, str):
            out.append(content)
            continue
        out += [b.get("text", "") for b in content if isinstance(b, dict)]
    return " ".join(out)


def test_regenerate_keeps_both_answers_and_switching_shows_each(live: LiveServer) -> None:
    chat = Chat(live)
    chat.ask({"message": FIRST})
    before = chat.session()
    answer = before["messages"][-1]
    assert answer["role"] == "assistant" and answer["status"] == "complete"

    asked = len(chat.requests)
    again, events = chat.ask({"regenerate": answer["id"]})
    assert events[0][1] == "turn_start" and events[-1][2]["status"] == "completed"
    assert again["user_message_id"] == before["messages"][0]["id"], "the same question"
    after = chat.session()
    question = after["messages"][0]
    assert question["id"] == before["messages"][0]["id"]
    # The new answer (its first message) is a sibling of the old one, under the question.
    first_answer = after["messages"][1]
    old_first = before["messages"][1]
    assert first_answer["parent_id"] == question["id"] == old_first["parent_id"]
    assert first_answer["sibling_ids"] == [old_first["id"], first_answer["id"]]
    assert after["active_leaf_id"] == after["messages"][-1]["id"] != before["active_leaf_id"]
    # The regenerate's first request is the question alone: no earlier answer.
    assert [m["role"] for m in chat.requests[asked]] == ["user"]
    assert words(chat.requests[asked]) == FIRST

    switched = live.http.put(
        f"/api/sessions/{chat.sid}/active_leaf", json={"message_id": old_first["id"]}
    )
    assert switched.status_code == 200, switched.text
    assert [m["id"] for m in switched.json()["messages"]] == [m["id"] for m in before["messages"]]
    assert switched.json()["active_leaf_id"] == before["active_leaf_id"]


def test_an_edit_is_a_sibling_and_the_model_sees_only_its_branch(live: LiveServer) -> None:
    chat = Chat(live)
    chat.ask({"message": FIRST})
    chat.ask({"message": SECOND})
    before = chat.session()
    second_question = next(
        m
        for m in before["messages"][1:]
        if m["role"] == "user" and m["content"][0]["type"] == "text"
    )
    asked = len(chat.requests)

    edited, _ = chat.ask(
        {"message": "Any subscriptions?", "parent_id": second_question["parent_id"]}
    )
    after = chat.session()
    texts = [t for role, t in chat.texts() if role == "user"]
    assert texts == [FIRST, "Any subscriptions?"]
    new_question = next(m for m in after["messages"] if m["id"] == edited["user_message_id"])
    assert new_question["sibling_ids"] == [second_question["id"], new_question["id"]]
    for request in chat.requests[asked:]:
        assert SECOND not in words(request), "the replaced question reached the model"
        assert FIRST in words(request), "the shared start of the branch is sent"

    # An edit of the first message starts a branch of its own (parent null).
    chat.ask({"message": "Show my accounts.", "parent_id": None})
    assert [t for role, t in chat.texts() if role == "user"] == ["Show my accounts."]
    roots = chat.session()["messages"][0]["sibling_ids"]
    assert len(roots) == 2


def test_bad_branch_requests_are_refused_and_change_nothing(live: LiveServer) -> None:
    chat = Chat(live)
    chat.ask({"message": FIRST})
    before = chat.session()
    question = before["messages"][0]["id"]
    for body, code in (
        ({"regenerate": question}, "not_an_answer"),  # a question, not an answer
        ({"regenerate": "msg_nope"}, "not_an_answer"),
        ({"message": "x", "parent_id": question}, "invalid_parent"),  # a user message
        ({"message": "x", "parent_id": "msg_nope"}, "invalid_parent"),
        ({"message": "x", "regenerate": question}, "validation_error"),
        ({}, "validation_error"),
        ({"message": "x", "if_busy": "maybe"}, "validation_error"),
    ):
        refused = chat.send(body, status=422)
        assert refused["error"]["code"] == code, body
    missing = live.http.put(f"/api/sessions/{chat.sid}/active_leaf", json={"message_id": "msg_no"})
    assert missing.status_code == 404
    assert chat.session() == before

"""Regenerate, edit and tool approval through the AI SDK route, read and folded in Python."""

from __future__ import annotations

import copy
from typing import Any

from sqlalchemy import select

from models import Budget, ToolRun
from models.db import Database
from tests.aisdk.conftest import Serve, read_ui
from tests.aisdk.test_ui_chat_http import stored, wait_done
from tests.aisdk.uifold import check_well_formed, fold
from tests.live import LiveServer

FIRST = "What did I spend on groceries last month?"
SECOND = "How are my budgets?"
RAISE = "Raise my groceries budget to 400"


def user(ui_id: str, text: str) -> dict[str, Any]:
    return {"id": ui_id, "role": "user", "parts": [{"type": "text", "text": text}]}


def post(live: LiveServer, chat_id: str, messages: list[Any], **extra: Any) -> list[Any]:
    body = {"id": chat_id, "messages": messages, "trigger": "submit-message", **extra}
    status, chunks, done = read_ui(live, "POST", "/api/ui/chat", json=body)
    assert status == 200 and done, status
    return chunks


def responded(message: dict[str, Any], approved: bool, reason: str | None = None) -> Any:
    """The message as addToolApprovalResponse leaves it."""
    out = copy.deepcopy(message)
    for part in out["parts"]:
        if part.get("state") == "approval-requested":
            part["state"] = "approval-responded"
            part["approval"] = {**part["approval"], "approved": approved}
            if reason is not None:
                part["approval"]["reason"] = reason
    return out


def budget_runs(db: Database) -> list[Any]:
    with db.read() as s:
        return s.execute(
            select(ToolRun.status, ToolRun.approval, ToolRun.is_error, ToolRun.result).where(
                ToolRun.name == "set_budget"
            )
        ).all()


def test_regenerate_answers_again_and_the_messages_show_the_new_branch(serve: Serve) -> None:
    live = serve()
    question = user("u1", FIRST)
    first = fold(post(live, "r", [question])).message
    chunks = post(live, "r", [question], trigger="regenerate-message", messageId=first["id"])
    again = fold(chunks).message
    assert again["id"] != first["id"] and again["metadata"] == {"status": "completed"}
    data = wait_done(live, "r")
    assert [m["id"] for m in data["messages"]] == ["u1", again["id"]]
    assert data["messages"][1] == again
    session = live.get(f"/api/sessions/{data['session_id']}").json()
    assert len(session["messages"][1]["sibling_ids"]) == 2, "both answers are kept"
    # regenerate() with no messageId names the last message (here the question).
    post(live, "r", [question], trigger="regenerate-message")
    session = live.get(f"/api/sessions/{data['session_id']}").json()
    assert len(session["messages"][1]["sibling_ids"]) == 3


def test_an_edit_by_the_clients_message_id_replaces_the_question_on_the_branch(
    serve: Serve,
) -> None:
    live = serve()
    a = fold(post(live, "e", [user("u1", FIRST)])).message
    post(live, "e", [user("u1", FIRST), a, user("u2", SECOND)])
    edited = user("u2", "Any subscriptions?")
    post(live, "e", [user("u1", FIRST), a, edited], messageId="u2")
    data = wait_done(live, "e")
    users = [(m["id"], m["parts"][0]["text"]) for m in data["messages"] if m["role"] == "user"]
    assert users == [("u1", FIRST), ("u2", "Any subscriptions?")]
    session = live.get(f"/api/sessions/{data['session_id']}").json()
    asked = [m for m in session["messages"] if m["content"][0].get("type") == "text"]
    question = [m for m in asked if m["role"] == "user"][-1]
    assert len(question["sibling_ids"]) == 2, "the first version is kept"


def test_approval_continues_the_same_message_and_a_second_follow_up_runs_nothing_again(
    serve: Serve, db: Database
) -> None:
    live = serve()
    ask = user("u1", RAISE)
    chunks = post(live, "ok", [ask])
    check_well_formed(chunks)
    held = fold(chunks).message
    request = next(c for c in chunks if c["type"] == "tool-approval-request")
    assert request["approvalId"] == request["toolCallId"]
    assert chunks[-1] == {"type": "finish", "finishReason": "tool-calls"}
    assert held["metadata"] == {"status": "awaiting_approval"}
    assert wait_done(live, "ok")["messages"][-1] == held
    follow_up = responded(held, True)
    more = post(live, "ok", [ask, follow_up], messageId=held["id"])
    assert more[0]["type"] == "start" and more[0]["messageId"] == held["id"]
    final = fold(more, follow_up).message
    part = next(p for p in final["parts"] if p["type"] == "tool-set_budget")
    assert part["state"] == "output-available" and part["approval"]["approved"] is True
    assert final == wait_done(live, "ok")["messages"][-1]
    assert final["metadata"] == {"status": "completed"}
    # Another tab sends the same follow-up: the same continuation, the tool ran once.
    again = fold(post(live, "ok", [ask, follow_up], messageId=held["id"]), follow_up).message
    assert again == final
    runs = budget_runs(db)
    assert len(runs) == 1 and runs[0].status == "done" and runs[0].approval == "approved"
    with db.read() as s:
        owner = live.user_id  # type: ignore[attr-defined]
        limits = s.scalars(select(Budget.limit_minor).where(Budget.user_id == owner)).all()
    assert 40000 in limits
    # The opposite decision now is a conflict and changes nothing.
    refused = live.post("/api/ui/chat", json={"id": "ok", "messages": [responded(held, False)]})
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "already_decided"


def test_a_denial_reaches_the_model_and_the_part_ends_denied(serve: Serve, db: Database) -> None:
    live = serve()
    ask = user("u1", RAISE)
    held = fold(post(live, "no", [ask])).message
    follow_up = responded(held, False, "not this month")
    final = fold(post(live, "no", [ask, follow_up]), follow_up).message
    part = next(p for p in final["parts"] if p["type"] == "tool-set_budget")
    assert part["state"] == "output-denied"
    assert part["approval"]["approved"] is False
    assert part["approval"]["reason"] == "not this month"
    assert final == wait_done(live, "no")["messages"][-1]
    (run,) = budget_runs(db)
    assert run.is_error and "declined" in run.result[0]["text"]
    assert "not this month" in run.result[0]["text"]
    session = live.get(f"/api/sessions/{wait_done(live, 'no')['session_id']}").json()
    sent = [
        b
        for m in session["messages"]
        for b in m["content"]
        if b.get("type") == "tool_result" and b.get("is_error")
    ]
    assert sent and "declined" in sent[0]["content"][0]["text"], "the model reads the denial"


def test_a_new_message_while_approval_is_pending_declines_it(serve: Serve, db: Database) -> None:
    live = serve()
    ask = user("u1", RAISE)
    held = fold(post(live, "new", [ask])).message
    post(live, "new", [ask, held, user("u2", FIRST)])
    messages = wait_done(live, "new")["messages"]
    part = next(p for p in messages[1]["parts"] if p["type"] == "tool-set_budget")
    assert part["state"] == "output-denied" and part["approval"]["approved"] is False
    (run,) = budget_runs(db)
    assert run.approval == "declined" and run.status == "done"
    late = live.post("/api/ui/chat", json={"id": "new", "messages": [responded(held, True)]})
    assert late.status_code == 409


def test_approvals_must_answer_every_waiting_action_and_name_this_chat(serve: Serve) -> None:
    live = serve()
    held = fold(post(live, "bad", [user("u1", RAISE)])).message
    other = copy.deepcopy(held)
    for part in other["parts"]:
        if part.get("state") == "approval-requested":
            part.update(state="approval-responded", approval={"id": "toolu_x", "approved": True})
    refused = live.post("/api/ui/chat", json={"id": "bad", "messages": [other]})
    assert refused.status_code == 422 and refused.json()["error"]["code"] == "unknown_approval"
    assert stored(live, "bad")["messages"][-1] == held


def test_if_busy_from_the_body_queues_behind_the_running_turn(serve: Serve) -> None:
    live = serve(DEMO_EVENT_DELAY=0.01)
    read_ui(live, "POST", "/api/ui/chat", json={"id": "q", "messages": [user("u1", FIRST)]},
            max_chunks=3)  # fmt: skip
    refused = live.post(
        "/api/ui/chat", json={"id": "q", "messages": [user("u2", SECOND)], "if_busy": "reject"}
    )
    assert refused.status_code == 409
    chunks = post(live, "q", [user("u3", SECOND)], if_busy="queue")
    assert fold(chunks).message["metadata"] == {"status": "completed"}
    users = [m["id"] for m in wait_done(live, "q")["messages"] if m["role"] == "user"]
    assert users == ["u1", "u3"]

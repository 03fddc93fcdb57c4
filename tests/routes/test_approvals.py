"""Actions the user approves: the turn pauses, a decision continues it, the tool runs once."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import select, update

from demo_data.generator import seed_finance
from engine.events.replay import stored_message
from models import Budget, Category, Message, ToolRun, utcnow
from streaming.wire.stored import result_events
from tests.helpers import text_of
from tests.live import LiveServer
from tests.routes.control import Chat
from tests.waits import wait_until

RAISE = "Raise my groceries budget to 400"


@pytest.fixture
def app_config(app_config: dict[str, Any]) -> dict[str, Any]:
    """Every timing at 1/10, for every test here (approvals are swept every 3 s, a tool has
    2 s): at 1/20 a loaded 2-core machine once ended the first turn `completed` instead of
    paused, most likely a tool's 1 s running out (`tool_timeout`) and the model answering."""
    return {**app_config, "TIME_SCALE": 0.1}


@pytest.fixture
def seeded(live: LiveServer, user: tuple[int, str]) -> LiveServer:
    """The live server with a user who has budgets to change."""
    seed_finance(live.app.extensions["db"], user[0], months=3, seed=5)
    return live


def groceries_limit(live: LiveServer) -> Decimal:
    """The Groceries recurring budget, in major units."""
    with live.app.extensions["db"].read() as s:
        minor = s.scalar(
            select(Budget.limit_minor)
            .join(Category, Category.id == Budget.category_id)
            .where(Category.name == "Groceries", Budget.month.is_(None))
        )
    return Decimal(minor) / 100


def runs_of(live: LiveServer, name: str) -> list[Any]:
    """The stored runs of a tool."""
    with live.app.extensions["db"].read() as s:
        return list(s.scalars(select(ToolRun).where(ToolRun.name == name)))


def pause(chat: Chat) -> tuple[dict[str, Any], dict[str, Any]]:
    """Ask for the change; return the paused turn and its approval request."""
    started, events = chat.ask({"message": RAISE})
    assert events[-1][2]["status"] == "awaiting_approval", events[-3:]
    [request] = [d for _, t, d in events if t == "approval_requested"]
    assert request["name"] == "set_budget" and request["input"]["amount"] == "400.00"
    preview = request["preview"]
    assert preview["changes"][0]["after"] == "400.00 USD" and preview["summary"]
    return started, request


def decide(live: LiveServer, turn_id: str, body: dict[str, Any], status: int = 200) -> Any:
    response = live.post(f"/api/turns/{turn_id}/approvals", json=body)
    assert response.status_code == status, response.text
    return response.json()


def test_an_approved_action_runs_once_however_often_it_is_approved(seeded: LiveServer) -> None:
    chat = Chat(seeded)
    before = groceries_limit(seeded)
    paused, request = pause(chat)
    assert before != Decimal("400.00")
    # The paused turn holds nothing: no running turn, the request is listed with the session.
    shown = chat.session()
    assert shown["running_turn_id"] is None
    assert [a["tool_use_id"] for a in shown["approvals"]] == [request["tool_use_id"]]
    assert groceries_limit(seeded) == before, "nothing changes before the approval"

    body = {"tool_use_id": request["tool_use_id"], "approved": True}
    decided = decide(seeded, paused["turn_id"], body)
    again = decide(seeded, paused["turn_id"], body)  # a second tab, the same decision
    assert decided["approval"] == again["approval"] == "approved"
    assert decided["continuation_turn_id"] == again["continuation_turn_id"] is not None
    events = chat.events(decided["continuation_turn_id"])
    kinds = [t for _, t, _ in events]
    assert kinds.index("approval_resolved") < kinds.index("tool_result") < kinds.index("turn_end")
    assert events[-1][2]["status"] == "completed"
    assert groceries_limit(seeded) == Decimal("400.00")
    decide(seeded, paused["turn_id"], {**body, "approved": False}, status=409)
    [run] = runs_of(seeded, "set_budget")
    assert run.status == "done" and not run.is_error and run.approval == "approved"

    turn = seeded.get(f"/api/turns/{paused['turn_id']}").json()
    assert turn["status"] == "continued"
    assert turn["continued_by"] == decided["continuation_turn_id"]
    actions = seeded.get("/api/actions").json()["actions"]
    assert [(a["name"], a["approval"], a["decided_by"]) for a in actions] == [
        ("set_budget", "approved", 1)
    ]
    assert actions[0]["preview"]["changes"][0]["before"] == f"{before:.2f} USD"
    assert chat.session()["approvals"] == []


def test_a_declined_action_is_not_taken_and_the_model_reads_why(seeded: LiveServer) -> None:
    chat = Chat(seeded)
    before = groceries_limit(seeded)
    paused, request = pause(chat)
    call = request["tool_use_id"]
    body = {"tool_use_id": call, "approved": False, "reason": "too much"}
    decided = decide(seeded, paused["turn_id"], body)
    # One flat object: the decided approval's own fields, then the turn that goes on.
    assert (decided["tool_use_id"], decided["approval"], decided["reason"]) == (
        call,
        "declined",
        "too much",
    )
    assert decided["continuation_turn_id"] and decided["events_url"]
    events = chat.events(decided["continuation_turn_id"])
    [resolved] = [d for _, t, d in events if t == "approval_resolved"]
    [result] = [d for _, t, d in events if t == "tool_result"]
    assert resolved["approved"] is False and result["is_error"] is True
    assert "declined" in result["content"][0]["text"] and "too much" in result["content"][0]["text"]
    sent = [b for m in chat.requests[-1] for b in m["content"] if isinstance(b, dict)]
    [answer] = [b for b in sent if b.get("tool_use_id") == call]
    assert "declined" in str(answer["content"]) and "too much" in str(answer["content"])
    assert "declined" not in answer, "the model reads the instruction, not our marker"
    assert groceries_limit(seeded) == before
    # What people read: the decision and the user's reason, not the model's instruction.
    assert result["declined"] == {"reason": "too much"}
    stored = [b for m in chat.session()["messages"] for b in m["content"]]
    [block] = [b for b in stored if b.get("tool_use_id") == call]
    assert block["declined"] == {"reason": "too much"}
    listed = seeded.get(f"/api/turns/{paused['turn_id']}/approvals").json()["approvals"]
    assert [a["approval"] for a in listed] == ["declined"]
    export = seeded.get(f"/api/sessions/{chat.sid}/export?format=md").text
    assert "**Declined**: too much" in export and "Tool error" not in export
    # The answer says what the user decided; the instruction meant for the model stays out.
    said = text_of(events)
    assert "I did not make that change" in said and "too much" in said
    assert "Do not take it" not in said and "Do not take it" not in export
    # A turn rebuilt from its rows (a takeover, a lost archive) shows the decision too.
    with seeded.app.extensions["db"].read() as s:
        row = s.get(Message, result["message_id"])
        [(_, shown)] = result_events(stored_message(row), {})
        assert shown["declined"] == {"reason": "too much"}


def test_a_new_message_declines_what_waits(seeded: LiveServer) -> None:
    chat = Chat(seeded)
    before = groceries_limit(seeded)
    paused, request = pause(chat)
    asked = len(chat.requests)
    nxt, events = chat.ask({"message": "Actually, how are my budgets?"})
    assert events[-1][2]["status"] == "completed"
    first = str(chat.requests[asked])
    assert "sent a new message instead" in first and "how are my budgets" in first
    assert chat.session()["approvals"] == []
    assert seeded.get(f"/api/turns/{paused['turn_id']}").json()["status"] == "continued"
    results = [m for m in chat.session()["messages"] if m["turn_id"] == nxt["turn_id"]]
    assert results[0]["content"][0]["type"] == "tool_result", "the denial, in the new turn"
    late = decide(
        seeded, paused["turn_id"], {"tool_use_id": request["tool_use_id"], "approved": True}, 409
    )
    assert late["error"]["code"] == "already_decided"
    assert late["error"]["message"] == "This action was already declined."
    [block] = [b for b in results[0]["content"] if b["tool_use_id"] == request["tool_use_id"]]
    assert block["declined"] == {"reason": "new message"}
    assert groceries_limit(seeded) == before
    [run] = runs_of(seeded, "set_budget")
    assert run.approval == "declined"


def test_decisions_on_what_is_not_asked_are_refused(seeded: LiveServer) -> None:
    chat = Chat(seeded)
    paused, request = pause(chat)
    for turn_id, body, status in (
        (paused["turn_id"], {"tool_use_id": "toolu_nope", "approved": True}, 404),
        ("turn_nope", {"tool_use_id": request["tool_use_id"], "approved": True}, 404),
        (paused["turn_id"], {"tool_use_id": request["tool_use_id"]}, 422),
        (paused["turn_id"], {"tool_use_id": request["tool_use_id"], "approved": "maybe"}, 422),
    ):
        decide(seeded, turn_id, body, status)
    assert chat.session()["approvals"][0]["approval"] is None


def test_an_unanswered_request_expires_into_a_denial(seeded: LiveServer) -> None:
    chat = Chat(seeded)
    before = groceries_limit(seeded)
    paused, request = pause(chat)
    ttl = seeded.app.config["SETTINGS"].timings.approval_ttl
    with seeded.app.extensions["db"].transaction() as s:
        s.execute(
            update(ToolRun)
            .where(ToolRun.tool_use_id == request["tool_use_id"])
            .values(created_at=utcnow() - timedelta(seconds=ttl + 1))
        )
    following = wait_until(
        lambda: seeded.get(f"/api/turns/{paused['turn_id']}").json()["continued_by"],
        timeout=30,
        message="the sweep never declined the request for the turn to go on",
        every=0.05,
    )
    events = chat.events(following)
    [result] = [d for _, t, d in events if t == "tool_result"]
    assert result["is_error"] and "in time" in result["content"][0]["text"]
    assert groceries_limit(seeded) == before
    [run] = runs_of(seeded, "set_budget")
    assert (run.approval, run.reason) == ("declined", "expired")

"""The AI SDK endpoints over a real loopback server, read and folded in Python."""

from __future__ import annotations

import time
from typing import Any

import pytest

from models.db import Database
from tests.aisdk.conftest import Serve, faulty_config, read_ui
from tests.aisdk.uifold import check_well_formed, fold
from tests.conftest import make_user
from tests.faults.upstream import FaultyUpstream, Normal, ResetAfter, Status
from tests.live import LiveServer
from tests.waits import wait_until

QUESTION = "What did I spend on groceries last month?"


def body(chat_id: str, text: str = QUESTION, **extra: Any) -> dict[str, Any]:
    """The body DefaultChatTransport sends for sendMessage({text})."""
    parts = [{"type": "text", "text": text}]
    user = {"id": f"u-{time.monotonic_ns()}", "role": "user", "parts": parts}
    base = {"id": chat_id, "messages": [user], "trigger": "submit-message", "messageId": None}
    return {**base, **extra}


def stored(live: LiveServer, chat_id: str) -> dict[str, Any]:
    response = live.get(f"/api/ui/chat/{chat_id}/messages")
    assert response.status_code == 200, response.text
    return response.json()


def steps_of(message: dict[str, Any]) -> int:
    return sum(1 for p in message["parts"] if p["type"] == "step-start")


def resume_headers(message: dict[str, Any]) -> dict[str, str]:
    return {"X-Resume-Message-Id": message["id"], "X-Resume-Steps": str(steps_of(message))}


def wait_done(live: LiveServer, chat_id: str) -> dict[str, Any]:
    def ended() -> dict[str, Any] | None:
        data = stored(live, chat_id)
        return data if data["running_turn_id"] is None else None

    return wait_until(ended, 15, "the turn did not end", every=0.05)


def test_a_multi_round_tool_turn_folds_to_the_stored_conversation(serve: Serve) -> None:
    live = serve()
    status, chunks, done = read_ui(live, "POST", "/api/ui/chat", json=body("c1"))
    assert status == 200 and done
    check_well_formed(chunks)
    kinds = [c["type"] for c in chunks]
    assert kinds.count("start-step") >= 2 and "tool-output-available" in kinds
    assert "reasoning-start" in kinds
    data = stored(live, "c1")
    user, assistant = data["messages"]
    assert user["parts"] == [{"type": "text", "text": QUESTION}]
    assert fold(chunks).message == assistant
    assert assistant["metadata"] == {"status": "completed"}
    # The same chat id continues the same session; another chat id is another session.
    read_ui(live, "POST", "/api/ui/chat", json=body("c1", "And my budgets?"))
    again = stored(live, "c1")
    assert again["session_id"] == data["session_id"] and len(again["messages"]) == 4
    read_ui(live, "POST", "/api/ui/chat", json=body("c2"))
    assert stored(live, "c2")["session_id"] != data["session_id"]


def test_a_chat_id_of_another_user_never_reaches_that_users_session(
    serve: Serve, db: Database
) -> None:
    live = serve()
    read_ui(live, "POST", "/api/ui/chat", json=body("shared"))
    _, bob = make_user(db, "bob")
    bob_headers = {"Authorization": f"Bearer {bob}"}
    assert live.http.get("/api/ui/chat/shared/messages", headers=bob_headers).status_code == 404
    assert live.http.get("/api/ui/chat/shared/stream", headers=bob_headers).status_code == 204
    assert live.http.post("/api/ui/chat/shared/cancel", headers=bob_headers).status_code == 404
    read_ui(live, "POST", "/api/ui/chat", token=bob, json=body("shared", "hello"))
    mine = stored(live, "shared")
    his = live.http.get("/api/ui/chat/shared/messages", headers=bob_headers).json()
    assert his["session_id"] != mine["session_id"]
    assert [m["parts"][0]["text"] for m in his["messages"] if m["role"] == "user"] == ["hello"]


def test_resume_answers_204_when_nothing_runs_and_replays_the_clients_step_when_named(
    serve: Serve,
) -> None:
    live = serve()
    assert live.get("/api/ui/chat/none/stream").status_code == 204
    read_ui(live, "POST", "/api/ui/chat", json=body("c"))
    assert live.get("/api/ui/chat/c/stream").status_code == 204
    final = stored(live, "c")["messages"][-1]
    path, headers = "/api/ui/chat/c/stream", resume_headers(final)
    status, rest, done = read_ui(live, "GET", path, headers=headers)
    assert status == 200 and done and rest[0] == {"type": "reset-step"}
    assert fold(rest, final).message == final
    bad = live.get("/api/ui/chat/c/stream", headers={"X-Resume-Steps": "two"})
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "validation_error"


@pytest.mark.parametrize("cut", [2, 9, 25, 60])
def test_a_client_that_drops_mid_turn_resumes_from_its_step(serve: Serve, cut: int) -> None:
    live = serve(DEMO_EVENT_DELAY=0.01)
    _, first, done = read_ui(live, "POST", "/api/ui/chat", json=body("slow"), max_chunks=cut)
    assert not done
    held = fold(first).message
    path, headers = "/api/ui/chat/slow/stream", resume_headers(held)
    status, rest, done = read_ui(live, "GET", path, headers=headers)
    assert status == 200 and done
    check_well_formed(rest, steps_of(held))
    final = fold(rest, held).message
    assert final == wait_done(live, "slow")["messages"][-1]


def test_a_stored_snapshot_of_a_running_turn_resumes_exactly(serve: Serve) -> None:
    live = serve(DEMO_EVENT_DELAY=0.01)
    read_ui(live, "POST", "/api/ui/chat", json=body("snap"), max_chunks=30)
    snapshot = stored(live, "snap")
    assert snapshot["running_turn_id"] is not None
    held = snapshot["messages"][-1]
    assert held["metadata"] == {"status": "running"} and held["id"] == snapshot["running_turn_id"]
    headers = snapshot["resume_headers"]
    _, rest, done = read_ui(live, "GET", "/api/ui/chat/snap/stream", headers=headers)
    assert done and fold(rest, held).message == wait_done(live, "snap")["messages"][-1]


def test_a_reader_without_a_position_gets_the_running_turn_from_its_start(serve: Serve) -> None:
    live = serve(DEMO_EVENT_DELAY=0.01)
    read_ui(live, "POST", "/api/ui/chat", json=body("replay"), max_chunks=5)
    _, chunks, done = read_ui(live, "GET", "/api/ui/chat/replay/stream")
    assert done and chunks[0]["type"] == "start"
    check_well_formed(chunks)
    assert fold(chunks).message == wait_done(live, "replay")["messages"][-1]


def test_cancel_ends_the_stream_with_abort_and_keeps_what_was_made(serve: Serve) -> None:
    live = serve(DEMO_EVENT_DELAY=0.02)
    _, first, _ = read_ui(live, "POST", "/api/ui/chat", json=body("stop"), max_chunks=12)
    response = live.post("/api/ui/chat/stop/cancel")
    assert response.status_code == 202 and response.json()["cancel_requested"] is True
    held = fold(first).message
    _, rest, done = read_ui(live, "GET", "/api/ui/chat/stop/stream", headers=resume_headers(held))
    assert done and rest[-1] == {"type": "abort", "reason": "cancelled"}
    final = fold(rest, held).message
    assert final == stored(live, "stop")["messages"][-1]
    assert final["metadata"] == {"status": "cancelled"}


def test_a_reset_mid_stream_is_discarded_and_retried_in_the_same_step(
    serve: Serve, upstream: FaultyUpstream
) -> None:
    upstream.script(ResetAfter(8), Normal())
    live = serve(**faulty_config(upstream))
    _, chunks, done = read_ui(live, "POST", "/api/ui/chat", json=body("flaky"))
    assert done and "reset-step" in [c["type"] for c in chunks]
    check_well_formed(chunks)
    assert fold(chunks).message == stored(live, "flaky")["messages"][-1]


def test_a_hard_upstream_failure_ends_with_an_error(serve: Serve, upstream: FaultyUpstream) -> None:
    upstream.script(Status(400))
    live = serve(**faulty_config(upstream))
    _, chunks, done = read_ui(live, "POST", "/api/ui/chat", json=body("broken"))
    assert done and [c["type"] for c in chunks][-2:] == ["error", "finish"]
    assert chunks[-1] == {"type": "finish", "finishReason": "error"}
    final = fold(chunks).message
    assert final == stored(live, "broken")["messages"][-1]
    assert final["metadata"]["status"] == "failed" and final["metadata"]["error"]["code"]


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        ({"trigger": "resume-stream"}, "trigger"),
        ({"trigger": "regenerate-message", "messageId": "turn_nope"}, "messageId"),
        ({"messages": [{"role": "assistant", "id": "a", "parts": [{"type": "tool-x",
          "state": "approval-responded", "approval": {"id": "t1", "approved": True}}]}]},
         "messages"),
        ({"messages": [{"role": "assistant", "id": "a", "parts": [{"type": "tool-x",
          "state": "approval-responded", "approval": {"id": "t1", "approved": "yes"}}]}]},
         "messages"),
        ({"messages": [{"role": "user", "id": 5, "parts": [{"type": "text", "text": "hi"}]}]},
         "messages"),
        ({"messageId": "never-sent"}, "messageId"),
        ({"if_busy": "maybe"}, "if_busy"),
        ({"messages": [{"role": "assistant", "parts": []}]}, "messages"),
        ({"messages": [{"role": "user", "parts": [{"type": "file", "url": "x"}]}]}, "messages"),
        ({"messages": [{"role": "user", "parts": [{"type": "text", "text": "  "}]}]}, "messages"),
        ({"messages": []}, "messages"),
        ({"id": "a/b"}, "id"),
    ],
)  # fmt: skip
def test_bad_bodies_are_422_and_change_nothing(
    serve: Serve, patch: dict[str, Any], field: str
) -> None:
    live = serve()
    response = live.post("/api/ui/chat", json={**body("bad"), **patch})
    assert response.status_code == 422, response.text
    assert field in response.json()["error"]["details"]
    assert live.get("/api/ui/chat/bad/messages").status_code == 404


def test_extra_body_fields_are_ignored_and_auth_is_required(serve: Serve) -> None:
    live = serve()
    status, _, done = read_ui(live, "POST", "/api/ui/chat", json=body("x", extra={"a": 1}))
    assert status == 200 and done
    anonymous = live.http.post("/api/ui/chat", json=body("x"), headers={"Authorization": ""})
    assert anonymous.status_code == 401

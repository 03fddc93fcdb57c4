"""The previous major of the `ai` package (6, pinned in v6/) against the same endpoints.

ai 6 reads every chunk the server sends on the way most apps use it: a multi-round tool turn,
cancel, regenerate and edit, a reload that resumes the running turn (replayed whole), cited
sources, and the tool approval follow-up, whose `tool-approval-response` chunk (ai 7 only) is
not sent back to the client that sent the decision. ai 6 has no `reset-step` chunk, so a resume
at the client's step and an upstream retry mid-answer need ai 7 (docs/aisdk.md).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from models.db import Database
from tests.aisdk import test_aisdk_node as v7
from tests.aisdk.conftest import Serve

V6 = Path(__file__).resolve().parent / "v6"
ENTRY = V6 / "node_modules" / "ai" / "dist" / "index.mjs"


@pytest.fixture(scope="module", autouse=True)
def v6_ready() -> None:
    """Skip without node (unless REQUIRE_NODE); fail without the pinned ai 6."""
    v7.require_node()
    if not ENTRY.exists():
        message = "tests/aisdk/v6/node_modules is missing: run `make test` (it runs `npm ci`)"
        if os.environ.get("REQUIRE_NODE"):
            pytest.fail(message)
        pytest.skip(message)


def run(live: Any, scenario: str, chat_id: str, **env: Any) -> dict[str, Any]:
    """Run the scenario with ai 6."""
    return v7.run(live, scenario, chat_id, AI_PACKAGE=ENTRY.as_uri(), **env)


def test_the_pinned_package_is_ai_6() -> None:
    assert '"version": "6.' in (V6 / "node_modules" / "ai" / "package.json").read_text()


def test_a_multi_round_tool_turn(serve: Serve) -> None:
    live = serve()
    out = run(live, "send", "tools6")
    v7.assert_equal_to_stored(live, "tools6", out)
    assert out["final"]["metadata"] == {"status": "completed"} and not out["errors"]


@pytest.mark.parametrize("approved", [True, False])
def test_use_chat_tool_approval_continues_the_same_message(
    serve: Serve, db: Database, approved: bool
) -> None:
    live = serve()
    chat_id = f"approve6{int(approved)}"
    out = run(
        live,
        "approve",
        chat_id,
        QUESTION="Raise my groceries budget to 400",
        APPROVED=int(approved),
        REASON="" if approved else "not now",
    )
    assert out["status"] == "ready"
    _, client_assistant = out["messages"]
    assert client_assistant["id"] == out["asked"]["id"]
    assert out["stored"][1] == client_assistant and out["otherTab"][1] == client_assistant
    part = next(p for p in client_assistant["parts"] if p["type"] == "tool-set_budget")
    assert part["state"] == ("output-available" if approved else "output-denied")
    assert part["approval"]["approved"] is approved


def test_use_chat_reload_resumes_the_running_turn(serve: Serve) -> None:
    live = serve(DEMO_EVENT_DELAY=0.01)
    out = run(live, "chat-reload", "reload6", CUT=20)
    assert out["disconnected"] is True
    user, assistant = v7.stored(live, "reload6")
    assert out["messages"][1] == assistant
    assert out["messages"][0]["parts"] == user["parts"]


def test_a_cancel_ends_with_abort(serve: Serve) -> None:
    live = serve(DEMO_EVENT_DELAY=0.02)
    out = run(live, "cancel", "stop6")
    assert out["cancelStatus"] == 202 and out["chunkTypes"][-1] == "abort"
    v7.assert_equal_to_stored(live, "stop6", out)


def test_use_chat_regenerate_and_edit(serve: Serve) -> None:
    out = run(serve(), "branches", "branches6")
    assert out["afterRegenerate"]["client"] == out["afterRegenerate"]["stored"]
    assert out["afterEdit"]["client"] == out["afterEdit"]["stored"]

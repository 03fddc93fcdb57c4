"""The real `ai` package (pinned in package.json) against a live server, run by node.

Each scenario ends with the client's final UIMessage equal to the stored conversation.
Skips only when node is absent and REQUIRE_NODE is unset; `make test` runs `npm ci` first.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from models import ToolRun
from models.db import Database
from tests.aisdk.cited import citation, cited_reply
from tests.aisdk.conftest import Serve, faulty_config
from tests.faults.upstream import FaultyUpstream, Normal, ResetAfter, Status, Transcript
from tests.live import LiveServer
from tests.waits import wait_until

HERE = Path(__file__).resolve().parent
NODE = shutil.which("node")


@pytest.fixture(scope="module", autouse=True)
def node_ready() -> None:
    """Skip without node (unless REQUIRE_NODE); fail without the pinned packages."""
    require_node()


def require_node() -> None:
    """Skip without node (unless REQUIRE_NODE); fail without the pinned packages."""
    if NODE is None:
        if os.environ.get("REQUIRE_NODE"):
            pytest.fail("node is required (REQUIRE_NODE is set) but is not installed")
        pytest.skip("node is not installed")
    if not (HERE / "node_modules" / "ai" / "package.json").exists():
        message = "tests/aisdk/node_modules is missing: run `make test` (it runs `npm ci`)"
        if os.environ.get("REQUIRE_NODE"):
            pytest.fail(message)
        pytest.skip(message)


def run(live: LiveServer, scenario: str, chat_id: str, **env: Any) -> dict[str, Any]:
    """Run `node run.mjs <scenario>` against `live`; return what it printed.

    AI_PACKAGE in `env` names another install of `ai` to drive it with (v6/).
    """
    token = live.headers["Authorization"].removeprefix("Bearer ")
    environ = {**os.environ, "BASE_URL": live.url, "TOKEN": token, "CHAT_ID": chat_id}
    environ.update({k: str(v) for k, v in env.items()})
    done = subprocess.run(
        [NODE or "node", str(HERE / "run.mjs"), scenario],
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def stored(live: LiveServer, chat_id: str) -> list[dict[str, Any]]:
    """The chat's stored conversation as UIMessages, once its turn has ended."""

    def ended() -> list[dict[str, Any]] | None:
        data = live.get(f"/api/ui/chat/{chat_id}/messages").json()
        return data["messages"] if data["running_turn_id"] is None else None

    return wait_until(ended, 20, "the turn did not end", every=0.05)


def assert_equal_to_stored(live: LiveServer, chat_id: str, out: dict[str, Any]) -> None:
    user, assistant = stored(live, chat_id)
    assert out["final"] == assistant
    assert out["user"]["parts"] == user["parts"]


def test_a_multi_round_tool_turn(serve: Serve) -> None:
    live = serve()
    out = run(live, "send", "tools")
    assert_equal_to_stored(live, "tools", out)
    types = out["chunkTypes"]
    assert types.count("start-step") >= 2 and "tool-output-available" in types
    parts = {p["type"] for p in out["final"]["parts"]}
    assert {"reasoning", "text", "step-start"} <= parts
    assert any(p["type"].startswith("tool-") and p["state"] == "output-available"
               for p in out["final"]["parts"])  # fmt: skip
    assert out["final"]["metadata"] == {"status": "completed"}
    # The demo cites the rows behind its figures: each source once, as the stored answer has it.
    sources = [p for p in out["final"]["parts"] if p["type"] == "source-document"]
    assert sources and len({p["sourceId"] for p in sources}) == len(sources)
    assert all(p["sourceId"].split(":")[0] in ("txn", "txns") for p in sources)


@pytest.mark.parametrize("cut", [3, 25])
def test_a_resume_mid_turn_continues_from_the_clients_step(serve: Serve, cut: int) -> None:
    live = serve(DEMO_EVENT_DELAY=0.01)
    out = run(live, "resume", f"resume{cut}", CUT=cut)
    assert out["resumedTypes"][0] == "reset-step" and "start" not in out["resumedTypes"]
    assert_equal_to_stored(live, f"resume{cut}", out)


def test_a_resume_from_the_stored_snapshot_of_a_running_turn(serve: Serve) -> None:
    live = serve(DEMO_EVENT_DELAY=0.01)
    out = run(live, "snapshot", "snap", CUT=15)
    assert out["snapshotRunning"] is True
    assert_equal_to_stored(live, "snap", out)


def test_a_cancel_ends_with_abort(serve: Serve) -> None:
    live = serve(DEMO_EVENT_DELAY=0.02)
    out = run(live, "cancel", "stop")
    assert out["cancelStatus"] == 202 and out["chunkTypes"][-1] == "abort"
    assert_equal_to_stored(live, "stop", out)
    assert out["final"]["metadata"] == {"status": "cancelled"}


def test_an_upstream_reset_mid_stream_is_replaced_by_the_retry(
    serve: Serve, upstream: FaultyUpstream
) -> None:
    upstream.script(ResetAfter(8), Normal())
    live = serve(**faulty_config(upstream))
    out = run(live, "send", "flaky")
    assert "reset-step" in out["chunkTypes"]
    assert_equal_to_stored(live, "flaky", out)


def test_a_hard_upstream_failure_ends_with_an_error(serve: Serve, upstream: FaultyUpstream) -> None:
    upstream.script(Status(400))
    live = serve(**faulty_config(upstream))
    out = run(live, "send", "broken")
    assert out["chunkTypes"][-2:] == ["error", "finish"] and out["errors"]
    assert_equal_to_stored(live, "broken", out)
    assert out["final"]["metadata"]["status"] == "failed"


@pytest.mark.parametrize("scenario", ["chat-drop", "chat-reload"])
def test_use_chat_after_a_network_drop(serve: Serve, scenario: str) -> None:
    live = serve(DEMO_EVENT_DELAY=0.01)
    out = run(live, scenario, scenario, CUT=20)
    assert out["disconnected"] is True
    user, assistant = stored(live, scenario)
    client_user, client_assistant = out["messages"]
    assert client_assistant == assistant
    assert client_user["parts"] == user["parts"]


def test_turns_left_out_of_the_models_view_reach_the_client_as_transient_data(
    serve: Serve,
) -> None:
    # A window so small that the second turn leaves the first out of the model's view.
    live = serve(MODEL_CONTEXT_TOKENS=6000, MAX_TOKENS=1000)
    run(live, "send", "long")
    out = run(live, "send", "long", QUESTION="Which subscriptions am I paying for?")
    assert "data-context-trimmed" in out["chunkTypes"]
    assert out["final"] == stored(live, "long")[-1], "transient: not among the parts"


def test_use_chat_regenerate_and_edit_keep_every_branch(serve: Serve) -> None:
    live = serve()
    out = run(live, "branches", "branches")
    after = out["afterRegenerate"]
    assert after["client"] == after["stored"]
    assert [m["role"] for m in after["client"]] == ["user", "assistant"]
    assert after["client"][1]["id"] != out["firstAnswer"]
    edited = out["afterEdit"]
    assert edited["client"] == edited["stored"]
    assert edited["client"][0]["parts"][0]["text"] == "Which subscriptions am I paying for?"
    assert edited["client"][0]["id"] == after["client"][0]["id"], "the client's id is kept"
    session = live.get("/api/ui/chat/branches/messages").json()["session_id"]
    messages = live.get(f"/api/sessions/{session}").json()["messages"]
    assert len(messages[0]["sibling_ids"]) == 2, "the first question is kept"


@pytest.mark.parametrize("approved", [True, False])
def test_use_chat_tool_approval_continues_the_same_message(
    serve: Serve, db: Database, approved: bool
) -> None:
    live = serve()
    chat_id = f"approve{int(approved)}"
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
    assert client_assistant["id"] == out["asked"]["id"], "one UIMessage for the question"
    assert out["stored"][1] == client_assistant and out["otherTab"][1] == client_assistant
    part = next(p for p in client_assistant["parts"] if p["type"] == "tool-set_budget")
    assert part["state"] == ("output-available" if approved else "output-denied")
    assert part["approval"]["approved"] is approved
    with db.read() as s:
        runs = s.execute(
            select(ToolRun.status, ToolRun.is_error, ToolRun.result).where(
                ToolRun.name == "set_budget"
            )
        ).all()
    assert len(runs) == 1, "the second tab's follow-up ran nothing again"
    assert runs[0].is_error is (not approved)
    if not approved:
        assert "declined" in runs[0].result[0]["text"] and "not now" in runs[0].result[0]["text"]


def test_cited_sources_reach_the_message_as_source_documents(
    serve: Serve, upstream: FaultyUpstream
) -> None:
    groceries = "txns:category=Groceries&start_date=2026-10-01&end_date=2026-10-31&direction=out"
    first = citation("txn:12", "2026-10-03 · Whole Foods · -82.10 USD", "Whole Foods -82.10", 0)
    again = citation("txn:12", "2026-10-03 · Whole Foods · -82.10 USD", "-82.10 USD", 0)
    total = citation(groceries, "Groceries in October: 339.14 USD", "339.14 USD, 5 rows", 1)
    blocks = [
        ("You spent ", []),
        ("339.14 USD on groceries", [total, first]),
        (", the largest ", []),
        ("82.10 USD at Whole Foods", [again]),
        (".", []),
    ]
    upstream.script(Transcript(cited_reply("msg_cited", blocks)))
    live = serve(**faulty_config(upstream))
    out = run(live, "send", "cited")
    assert_equal_to_stored(live, "cited", out)
    sources = [p for p in out["final"]["parts"] if p["type"] == "source-document"]
    assert sources == [
        {"type": "source-document", "sourceId": s, "mediaType": "application/json", "title": t}
        for s, t in [(groceries, total["title"]), ("txn:12", first["title"])]
    ], "one per distinct source, titled by its citation"
    texts = [p["text"] for p in out["final"]["parts"] if p["type"] == "text"]
    assert (
        "".join(texts) == "You spent 339.14 USD on groceries, the largest 82.10 USD at Whole Foods."
    )
    # The stored answer keeps each block's citations verbatim.
    session = live.get("/api/ui/chat/cited/messages").json()["session_id"]
    answer = live.get(f"/api/sessions/{session}").json()["messages"][1]["content"]
    assert [b.get("citations") for b in answer] == [None, [total, first], None, [again], None]

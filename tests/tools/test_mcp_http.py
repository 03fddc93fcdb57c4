"""MCP tools through the whole app: its engine's links, the real client and the test upstream."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from demo_model.wire import sse
from tests.engine.streams import tool_use
from tests.faults.upstream import FaultyUpstream, Normal, Transcript
from tests.live import LiveServer
from tests.routes.control import Chat
from tests.tools.mcp_fixtures import calls, stdio_spec, write_config

LOOKUP, TRANSFER = "mcp__counting__lookup", "mcp__counting__transfer"


def calling(tool_id: str, name: str, arguments: str) -> Transcript:
    """The upstream's reply: one call of `name`, as raw SSE bytes."""
    events = tool_use(tool_id, name, [arguments])
    return Transcript(b"".join(sse(e["type"], e) for e in events))


@pytest.fixture
def upstream() -> Iterator[FaultyUpstream]:
    with FaultyUpstream() as server:
        yield server


@pytest.fixture
def count_file(tmp_path: Path) -> Path:
    return tmp_path / "calls.txt"


@pytest.fixture
def live(
    app_config: dict[str, Any],
    user: tuple[int, str],
    upstream: FaultyUpstream,
    tmp_path: Path,
    count_file: Path,
) -> Iterator[LiveServer]:
    from app import create_app

    spec = stdio_spec(count_file, readOnlyTools=["lookup"])
    config = {
        **app_config,
        "ANTHROPIC_API_KEY": "sk-test",
        "ANTHROPIC_BASE_URL": upstream.url,
        "MCP_CONFIG": write_config(tmp_path / "mcp.json", {"counting": spec}),
    }
    app = create_app(config)
    server = LiveServer(app, user[1])
    yield server
    server.close()
    app.extensions["engine"].close()
    app.extensions["db"].dispose()


def test_a_read_only_mcp_tool_runs_once_in_a_turn_over_http(
    live: LiveServer, upstream: FaultyUpstream, count_file: Path
) -> None:
    upstream.script(calling("toolu_1", LOOKUP, '{"key": "k"}'), Normal())
    _, events = Chat(live).ask({"message": "look k up"})
    assert events[-1][2]["status"] == "completed"
    assert calls(count_file) == ["lookup"]
    [result] = [
        b
        for m in upstream.requests[1]["messages"]
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]
    assert result["content"][0]["text"] == "value of k"
    names = [t["name"] for t in upstream.requests[0]["tools"]]
    assert LOOKUP in names and "get_transactions" in names
    assert upstream.requests[0]["tools"] == upstream.requests[1]["tools"]


def test_an_mcp_call_waits_for_approval_and_always_lets_the_next_one_run(
    live: LiveServer, upstream: FaultyUpstream, count_file: Path
) -> None:
    chat = Chat(live)
    upstream.script(calling("toolu_t1", TRANSFER, '{"amount": 1}'))
    started, events = chat.ask({"message": "move 1"})
    assert events[-1][2]["status"] == "awaiting_approval"
    [asked] = [d for _, t, d in events if t == "approval_requested"]
    assert asked["preview"]["target"]["server"] == "counting" and calls(count_file) == []
    upstream.script(Normal(), calling("toolu_t2", TRANSFER, '{"amount": 2}'), Normal())
    decided = live.post(
        f"/api/turns/{started['turn_id']}/approvals",
        json={"tool_use_id": "toolu_t1", "approved": True, "always": True},
    )
    assert decided.status_code == 200, decided.text
    following = chat.events(decided.json()["continuation_turn_id"])
    assert following[-1][2]["status"] == "completed"
    _, again = chat.ask({"message": "move 2"})
    assert again[-1][2]["status"] == "completed"
    assert not [d for _, t, d in again if t == "approval_requested"]
    assert calls(count_file) == ["transfer", "transfer"]


def test_the_ai_sdk_stream_asks_to_approve_an_mcp_call(
    live: LiveServer, upstream: FaultyUpstream, count_file: Path
) -> None:
    from tests.aisdk.conftest import read_ui

    upstream.script(calling("toolu_t1", TRANSFER, '{"amount": 3}'))
    user = {"id": "u-1", "role": "user", "parts": [{"type": "text", "text": "move 3"}]}
    chat = {"id": "c-mcp", "messages": [user], "trigger": "submit-message", "messageId": None}
    status, chunks, done = read_ui(live, "POST", "/api/ui/chat", json=chat)
    assert status == 200 and done
    [asked] = [c for c in chunks if c["type"] == "tool-approval-request"]
    assert asked["toolCallId"] == "toolu_t1"
    assert calls(count_file) == []

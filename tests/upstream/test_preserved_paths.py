"""Every path that builds a request, against a double of the models of today (issue 36).

The double (tests/upstream/api_double.py) refuses, as Anthropic's docs say the API does, any
thinking block whose prefix changed and every parameter these models refuse; each test ends
with no refusal and every turn completed. Paths: start, a long conversation with tool rounds,
queued and interrupting messages, an approval's continuation, edit, regenerate, a full window,
tools added, removed and behind tool search, a new day, a model switch, a retry after a cut
stream; then the safety net (the documented 400 answered with drop_block, once).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import update

from demo_model.binding import unmarked
from engine.store.starts import Ask
from models import ChatSession
from streaming.wire.stored import message_events
from tests.faults.kinds import ResetAfter
from tests.upstream.api_double import BINDING_BETA, INLINE_BETA, UPDATES_BETA, ApiDouble
from tests.upstream.preserved import Chat
from tools.search import searchable

QUESTIONS = [
    "What did I spend on groceries last month?",
    "Am I over budget anywhere this month?",
    "How much money do I have across my accounts?",
    "Which subscriptions am I paying for?",
    "Show me my biggest purchases last month.",
    "Compare restaurants this month with last month.",
]


@pytest.fixture
def double() -> Iterator[ApiDouble]:
    with ApiDouble() as served:
        yield served


@pytest.fixture
def chat(double: ApiDouble, db_url: str, tmp_path: Path) -> Iterator[Chat]:
    opened = Chat(double, db_url, tmp_path)
    yield opened
    opened.close()


def thinking_sent(body: dict[str, Any]) -> int:
    """How many thinking blocks a request sends back."""
    return sum(
        1
        for m in body["messages"]
        if m["role"] == "assistant" and isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "thinking"
    )


def results(message: dict[str, Any]) -> bool:
    """True for a message of tool results."""
    content = message["content"]
    return isinstance(content, list) and any(b.get("type") == "tool_result" for b in content)


def assert_append_only(bodies: list[dict[str, Any]]) -> None:
    """Each request sends the same system and tools, and the one before it as a prefix (the
    reply it got in between included)."""
    first = unmarked(bodies[0])
    for before, after in itertools.pairwise(bodies):
        a, b = unmarked(before), unmarked(after)
        assert b["system"] == first["system"] and b["tools"] == first["tools"]
        assert b["messages"][: len(a["messages"])] == a["messages"], "history was rewritten"


def test_a_long_conversation_with_tool_rounds_only_appends(chat: Chat, double: ApiDouble) -> None:
    for question in QUESTIONS * 2:
        assert chat.ask(question).status == "completed"
    assert double.refused() == []
    assert_append_only(double.requests)
    assert max(thinking_sent(b) for b in double.requests) >= 12, "thinking went back, checked"
    dates = [
        b["text"]
        for body in double.requests
        for m in body["messages"]
        if m["role"] == "system"
        for b in m["content"]
    ]
    assert len(set(dates)) == 1 and dates[0] == f"Today is {date.today().isoformat()}."


@pytest.mark.parametrize("model", ["claude-sonnet-5-5", "claude-opus-5-5", "claude-haiku-5-5"])
def test_each_model_of_today_gets_only_what_it_takes(
    double: ApiDouble, db_url: str, tmp_path: Path, model: str
) -> None:
    chat = Chat(double, db_url, tmp_path, ANTHROPIC_MODEL=model, EFFORT="high")
    try:
        done = chat.ask(QUESTIONS[0])
    finally:
        chat.close()
    assert done.status == "completed" and double.refused() == []
    for body, betas in zip(double.requests, double.betas, strict=True):
        assert "tool_choice" not in body and "budget_tokens" not in json.dumps(body)
        display = "summarized" if model == "claude-haiku-5-5" else "updates"
        assert body["thinking"] == {"type": "adaptive", "display": display}
        assert body["output_config"] == {"effort": "high"}
        assert (UPDATES_BETA in betas) == (display == "updates")


def test_progress_notes_reach_the_client_live_and_replayed(chat: Chat, double: ApiDouble) -> None:
    done = chat.ask(QUESTIONS[0])
    notes = [n["text"] for n in done.of("progress")]
    assert len(notes) >= 2 and all(notes), "one note before each round of calls"
    assert notes[0].startswith("Looking up ")
    stored = [m for m in chat.stored() if m["role"] == "assistant"]
    replayed = [
        data["text"]
        for row in stored
        for name, data in message_events({**row, "model": None})
        if name == "progress"
    ]
    assert replayed == notes, "a replay shows the same status lines"


def test_queued_and_interrupting_messages(chat: Chat, double: ApiDouble) -> None:
    double.delay = 0.02  # long enough for a second message to arrive while one runs
    first = chat.service.start(chat.user_id, chat.session_id, QUESTIONS[0])
    queued = chat.service.start(chat.user_id, chat.session_id, Ask(QUESTIONS[1], if_busy="queue"))
    assert chat.done(first.turn_id).status == "completed"
    assert chat.done(queued.turn_id).status == "completed"
    running = chat.service.start(chat.user_id, chat.session_id, QUESTIONS[2])
    cutting = chat.service.start(
        chat.user_id, chat.session_id, Ask(QUESTIONS[3], if_busy="interrupt")
    )
    assert chat.done(running.turn_id).status in ("cancelled", "completed")
    double.delay = 0.0
    assert chat.done(cutting.turn_id).status == "completed"
    assert chat.ask(QUESTIONS[4]).status == "completed"
    assert double.refused() == []


def test_an_approval_continuation_edit_and_regenerate(chat: Chat, double: ApiDouble) -> None:
    assert chat.ask(QUESTIONS[0]).status == "completed"
    paused = chat.ask("Raise my groceries budget to 400")
    assert paused.status == "awaiting_approval"
    assert chat.approve(paused).status == "completed"
    answer = chat.stored()[-1]
    assert chat.ask(Ask(regenerate=answer["id"])).status == "completed"
    stored = chat.stored()
    asked = [i for i, m in enumerate(stored) if m["role"] == "user" and not results(m)]
    parent = stored[asked[-1] - 1]["id"]
    edited = Ask("Raise my groceries budget to 450", edit=True, parent_id=parent)
    again = chat.ask(edited)
    assert again.status == "awaiting_approval"
    assert chat.approve(again).status == "completed"
    assert chat.ask(QUESTIONS[1]).status == "completed"
    assert double.refused() == []


def test_a_full_window_trims_without_rewriting_what_thinking_rests_on(
    double: ApiDouble, db_url: str, tmp_path: Path
) -> None:
    chat = Chat(double, db_url, tmp_path, MODEL_CONTEXT_TOKENS=16_000, MAX_TOKENS=1000)
    try:
        turns = [chat.ask(q) for q in QUESTIONS * 3]
    finally:
        chat.close()
    assert [t.status for t in turns] == ["completed"] * len(turns)
    assert any(t.of("context_trimmed") for t in turns), "the conversation outgrew the window"
    assert double.refused() == []
    kept = [b for b in double.requests if thinking_sent(b)]
    assert kept and len(kept) < len(double.requests)


class Hub:
    """An MCP hub as the tool runner sees it: its tools join ours (deferred past a threshold)."""

    def __init__(self, tools: list[dict[str, Any]], threshold: int = 0) -> None:
        self.tools, self.threshold = tools, threshold

    def definitions(
        self, base: list[dict[str, Any]], eager: bool, threshold: int = 0
    ) -> list[dict[str, Any]]:
        return searchable(base, self.tools, self.threshold)

    def get(self, name: str) -> None:
        return None

    def close(self) -> list[Any]:
        """No server was connected: no task to end."""
        return []


def mcp_tool(name: str) -> dict[str, Any]:
    return {
        "name": f"mcp__notes__{name}",
        "description": f"The notes server's {name}.",
        "input_schema": {"type": "object", "properties": {}},
    }


def test_tools_added_removed_and_behind_tool_search_are_notes(
    chat: Chat, double: ApiDouble
) -> None:
    assert chat.ask(QUESTIONS[0]).status == "completed"
    frozen = double.requests[-1]["tools"]
    chat.deps.tools.hub = Hub([mcp_tool("save"), mcp_tool("find")])
    assert chat.ask(QUESTIONS[1]).status == "completed"
    added = double.requests[len(double.requests) - 1]
    notes = [m for m in added["messages"] if m["role"] == "system"][-1]["content"]
    kinds = [(b["type"], b["tool"]["type"]) for b in notes if b["type"] != "text"]
    assert kinds == [("tool_addition", "tool_definition")] * 2
    assert INLINE_BETA in double.betas[-1]
    chat.deps.tools.hub = Hub([mcp_tool("save"), mcp_tool("find"), mcp_tool("list")], 3)
    assert chat.ask(QUESTIONS[2]).status == "completed"
    searched = [m for m in double.requests[-1]["messages"] if m["role"] == "system"][-1]
    names = [b["tool"]["definition"]["name"] for b in searched["content"]]
    assert "tool_search_tool_bm25" in names and "mcp__notes__list" in names
    chat.deps.tools.hub = Hub([])
    assert chat.ask(QUESTIONS[3]).status == "completed"
    gone = [m for m in double.requests[-1]["messages"] if m["role"] == "system"][-1]
    assert {b["type"] for b in gone["content"]} == {"tool_removal"}
    assert all(b["tools"] == frozen for b in double.requests), "tools stay as first sent"
    assert double.refused() == []
    assert_append_only(double.requests)


def test_a_new_day_is_a_note_and_nothing_before_it_changes(chat: Chat, double: ApiDouble) -> None:
    assert chat.ask(QUESTIONS[0]).status == "completed"
    tomorrow = date.today() + timedelta(days=1)
    chat.deps.model.today = lambda: tomorrow
    assert chat.ask(QUESTIONS[1]).status == "completed"
    assert chat.ask(QUESTIONS[2]).status == "completed"
    told = [
        b["text"]
        for m in double.requests[-1]["messages"]
        if m["role"] == "system"
        for b in m["content"]
    ]
    assert told == [f"Today is {date.today()}.", f"Today is {tomorrow}."]
    assert double.refused() == []
    assert_append_only(double.requests)


def test_a_model_switch_drops_the_other_models_blocks_silently(
    double: ApiDouble, db_url: str, tmp_path: Path
) -> None:
    first = Chat(double, db_url, tmp_path)
    try:
        assert first.ask(QUESTIONS[0]).status == "completed"
        session, user = first.session_id, first.user_id
    finally:
        first.close()
    second = Chat(double, db_url, tmp_path, session, user, ANTHROPIC_MODEL="claude-opus-5-5")
    try:
        assert second.ask(QUESTIONS[1]).status == "completed"
        assert second.ask(QUESTIONS[2]).status == "completed"
    finally:
        second.close()
    assert double.refused() == []
    reasons = {t["reason"] for t in double.transformations[-1]}
    assert reasons == {"model_binding_mismatch"}, "sonnet's blocks, dropped without a word"


def test_a_retry_after_a_cut_stream_sends_the_same_request(chat: Chat, double: ApiDouble) -> None:
    double.faults[1] = ResetAfter(6)
    done = chat.ask(QUESTIONS[0])
    assert done.status == "completed"
    assert unmarked(double.requests[1]) == unmarked(double.requests[2])
    assert chat.ask(QUESTIONS[1]).status == "completed"
    assert double.refused() == []


def test_the_documented_400_is_answered_once_and_the_turn_completes(
    chat: Chat, double: ApiDouble
) -> None:
    assert chat.ask(QUESTIONS[0]).status == "completed"
    # What a release that rewrote the conversation's copy would do: its blocks no longer fit.
    copy = json.loads(chat.session().sent_prompt or "{}")
    copy["system"][0]["text"] += " Be brief."
    with chat.db.transaction() as s:
        values = {"sent_prompt": json.dumps(copy)}
        s.execute(update(ChatSession).where(ChatSession.id == chat.session_id).values(values))
    done = chat.ask(QUESTIONS[1])
    assert done.status == "completed"
    assert not done.of("turn_error") and not done.of("message_discarded"), "only the answer"
    (refused,) = double.refused()
    assert "The block is bound to a different conversation" in refused
    retried = double.requests[double.server.served.index("Rejected") + 1]
    assert retried["thinking"]["block_binding"] == {"prefix_mismatch_behavior": "drop_block"}
    assert chat.session().drop_blocks
    dropped = [t for t in double.transformations[-1] if t["type"] == "thinking_dropped"]
    assert dropped and chat.turn_row(done.turn_id).dropped_blocks >= len(dropped)
    usages = [m.usage or {} for m in chat.deps.messages.turn_messages(done.turn_id)]
    assert any(u.get("input_transformations") for u in usages)
    assert chat.ask(QUESTIONS[2]).status == "completed"
    later = double.requests[-1]
    assert later["thinking"]["block_binding"] == {"prefix_mismatch_behavior": "drop_block"}
    assert BINDING_BETA in double.betas[-1]


def test_a_conversation_from_before_copies_drops_its_old_blocks_from_the_start(
    chat: Chat, double: ApiDouble
) -> None:
    assert chat.ask(QUESTIONS[0]).status == "completed"
    with chat.db.transaction() as s:
        reset = {"sent_prompt": None, "drop_blocks": False}
        s.execute(update(ChatSession).where(ChatSession.id == chat.session_id).values(reset))
    assert chat.ask(QUESTIONS[1]).status == "completed"
    assert chat.session().drop_blocks and chat.session().sent_prompt
    assert double.requests[-1]["thinking"]["block_binding"]["prefix_mismatch_behavior"]
    assert double.refused() == []

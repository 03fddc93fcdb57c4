"""A cited answer as the API streams it: citations stay on their own text block, and are sent
back as they came while every search result they number stays where it was; an answer from
before a trim step loses them (their numbering belongs to the request they answered)."""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any

from engine.upstream.catalog import DEMO
from engine.upstream.conversation import Conversation, freeze, outgoing
from engine.upstream.selection import plan
from streaming.messages.accumulator import MessageAccumulator
from streaming.messages.effects import BlockStopped
from streaming.wire.sse import iter_json_events

CITED = Path(__file__).parent / "transcripts" / "cited_answer.sse"


def cited_events() -> list[dict[str, Any]]:
    """The hand-made transcript of a cited answer, decoded."""
    return list(iter_json_events([CITED.read_bytes()]))


def citations_in(events: list[dict[str, Any]]) -> dict[int, list[dict[str, Any]]]:
    """Return the citations the stream sent, by block index."""
    out: dict[int, list[dict[str, Any]]] = {}
    for e in events:
        if e["type"] == "content_block_delta" and e["delta"]["type"] == "citations_delta":
            out.setdefault(e["index"], []).append(e["delta"]["citation"])
    return out


def test_the_accumulator_keeps_citations_on_their_text_block(sdk_oracle: Any) -> None:
    events = cited_events()
    acc = MessageAccumulator()
    stopped: dict[int, dict[str, Any]] = {}
    for event in events:
        for change in acc.feed(event):
            if isinstance(change, BlockStopped):
                stopped[change.index] = change.block
    content = acc.message()["content"]
    sent = citations_in(events)
    assert sorted(sent) == [1, 3]
    assert [b.get("citations") for b in content] == [None, sent[1], None, sent[3], None]
    assert "".join(b["text"] for b in content) == (
        "In August you spent 339.14 USD on groceries across five purchases; the largest was "
        "126.91 USD at Safeway on August 22."
    )
    # What block_end carries: the block as it stopped, citations included.
    assert {i: b.get("citations") for i, b in stopped.items() if "citations" in b} == sent
    assert acc.message() == sdk_oracle(events)[0]


def history_after_a_cited_answer() -> list[dict[str, Any]]:
    acc = MessageAccumulator()
    for event in cited_events():
        acc.feed(event)
    result = {
        "type": "search_result",
        "source": "txn:396",
        "title": "2025-08-22 · Safeway · -126.91 USD",
        "content": [{"type": "text", "text": "Transaction 396 on 2025-08-22: -126.91 USD."}],
        "citations": {"enabled": True},
    }
    tool = {"type": "tool_result", "tool_use_id": "t1", "content": [result]}
    return [
        {"role": "user", "content": "Groceries in August?"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}],
        },
        {"role": "user", "content": [tool]},
        {"role": "assistant", "content": acc.message()["content"], "id": "m1"},
        {"role": "user", "content": "And July?"},
    ]


def sent_of(history: list[dict[str, Any]], stale: int = 0) -> list[dict[str, Any]]:
    """What a request sends of `history` (its first `stale` messages answered before a trim)."""
    chosen = replace(plan(history, room=1e9), stale=stale)
    conversation = Conversation(freeze([]), DEMO)
    sent = outgoing(conversation, chosen, date(2025, 9, 1), []).messages
    return [m for m in sent if m["role"] != "system"]


def test_citations_are_sent_back_and_the_history_is_not_changed() -> None:
    history = history_after_a_cited_answer()
    before = copy.deepcopy(history)
    sent = sent_of(history)
    assert history == before, "stored messages are not changed"
    assert sent[3]["content"] == history[3]["content"], "exactly as the API returned it"
    # The search results a tool gave keep their own `citations: {enabled}` switch.
    assert sent[2]["content"][0]["content"][0]["citations"]


def test_an_answer_from_before_a_trim_step_loses_its_citations() -> None:
    history = history_after_a_cited_answer()
    sent = sent_of(history, stale=4)
    assert not any("citations" in b for m in sent if m["role"] == "assistant" for b in m["content"])
    assert sent[3]["content"] == [
        {"type": "text", "text": b["text"]} for b in history[3]["content"]
    ]
    assert history == history_after_a_cited_answer(), "stored messages keep them"


def test_what_is_sent_is_deterministic() -> None:
    once = sent_of(history_after_a_cited_answer(), stale=4)
    assert json.dumps(sent_of(history_after_a_cited_answer(), stale=4)) == json.dumps(once)

"""A cited answer as the API streams it: citations stay on their own text block, and are never
sent back to the model (their numbering belongs to the request they answered)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from streaming.messages.accumulator import MessageAccumulator
from streaming.messages.effects import BlockStopped
from streaming.messages.sent import as_sent
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


def test_citations_are_not_sent_back_and_the_history_is_not_changed() -> None:
    history = history_after_a_cited_answer()
    before = copy.deepcopy(history)
    sent = as_sent(history)
    assert history == before, "stored messages keep their citations"
    assert not any("citations" in b for m in sent if m["role"] == "assistant" for b in m["content"])
    assert sent[3]["content"] == [
        {"type": "text", "text": b["text"]} for b in history[3]["content"]
    ]
    assert sent[3]["id"] == "m1"
    # The search results a tool gave keep their own `citations: {enabled}` switch.
    assert sent[2] is history[2] and sent[2]["content"][0]["content"][0]["citations"]
    assert sent[0] is history[0] and sent[4] is history[4]


def test_stripping_is_deterministic_and_idempotent() -> None:
    history = history_after_a_cited_answer()
    once = as_sent(history)
    assert as_sent(once) == once
    assert json.dumps(as_sent(history_after_a_cited_answer())) == json.dumps(once)

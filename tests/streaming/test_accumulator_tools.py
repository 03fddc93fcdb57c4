"""MessageAccumulator and tool input: fragments joined and parsed once, never run as {}."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from streaming.messages.accumulator import MessageAccumulator
from tests.streaming.events import (
    TOOL,
    block_start,
    feed_all,
    json_part,
    start,
    stop,
    stopped_blocks,
)

TRANSCRIPTS = Path(__file__).resolve().parents[2].parent / "shared" / "transcripts"


# --- edge cases from real bug reports --------------------------------------------------


def test_tool_input_never_empty_when_fragments_sent(message_transcript, load_events) -> None:
    events = load_events(message_transcript)
    fragments: dict[int, list[str]] = {}
    for event in events:
        if event["type"] == "message_start":
            fragments = {}
        if event["type"] == "content_block_delta" and event["delta"]["type"] == "input_json_delta":
            fragments.setdefault(event["index"], []).append(event["delta"]["partial_json"])
    acc = MessageAccumulator()
    changes = feed_all(acc, events)
    by_index = {c.index: c for c in stopped_blocks(changes)}
    for index, parts in fragments.items():
        joined = "".join(parts)
        stopped = by_index[index]
        assert stopped.error is None
        if joined.strip():
            assert stopped.block["input"] == json.loads(joined) != {}
        else:
            assert stopped.block["input"] == {}


def test_tool_input_is_empty_dict_when_only_fragment_is_empty(load_events) -> None:
    acc = MessageAccumulator()
    changes = feed_all(acc, load_events("vercel-ai__tool_use_empty_input.sse"))
    tool = stopped_blocks(changes)[-1]
    assert tool.block == {
        "type": "tool_use",
        "id": "toolu_01QE1WLsSVp5hy5Q3GmGTmjP",
        "name": "updateIssueList",
        "input": {},
    }
    assert tool.error is None


def test_tool_input_whole_in_block_start_is_kept(load_events) -> None:
    events = load_events("vercel-ai-inline__tool_use_input_in_content_block_start_no_deltas.sse")
    acc = MessageAccumulator()
    feed_all(acc, events)
    (block,) = acc.message()["content"]
    assert block["input"] == {"sql": "SELECT COUNT(*) FROM orders"}
    assert block["caller"] == {"type": "code_execution_20250825", "tool_id": "srvtoolu_01CodeExec"}
    assert acc.message()["stop_reason"] == "tool_use"
    assert not acc.stopped  # the file ends with `data: [DONE]`, never message_stop


def test_invalid_tool_json_gives_error_not_exception() -> None:
    acc = MessageAccumulator()
    events = [
        start(),
        block_start(0, dict(TOOL)),
        json_part(0, '{"a": '),
        json_part(0, "}"),
        stop(0),
    ]
    (stopped,) = stopped_blocks(feed_all(acc, events))
    assert stopped.block["input"] == {}
    assert stopped.error.startswith("tool input was not valid JSON: ")
    assert acc.message()["content"] == [stopped.block]


def test_non_object_tool_json_gives_error() -> None:
    acc = MessageAccumulator()
    events = [start(), block_start(0, dict(TOOL)), json_part(0, "[1, 2]"), stop(0)]
    (stopped,) = stopped_blocks(feed_all(acc, events))
    assert stopped.block["input"] == {}
    assert stopped.error == "tool input was not a JSON object: got list"


def test_tool_input_is_parsed_once_at_block_stop(monkeypatch: Any) -> None:
    """No per-delta work that grows with the message: fragments are joined and parsed once."""
    import streaming.messages.accumulator as module

    calls: list[int] = []
    real_loads = module.json.loads

    def counting_loads(raw: str) -> Any:
        calls.append(len(raw))
        return real_loads(raw)

    monkeypatch.setattr(module.json, "loads", counting_loads)
    acc = MessageAccumulator()
    acc.feed(start())
    acc.feed(block_start(1, dict(TOOL)))
    fragments = ['{"rows": ['] + ['"x",'] * 2_000 + ['"x"]}']
    for fragment in fragments:
        assert not calls
        acc.feed(json_part(1, fragment))
    acc.feed(stop(1))
    assert calls == [len("".join(fragments))]
    assert len(acc.message()["content"][0]["input"]["rows"]) == 2_001

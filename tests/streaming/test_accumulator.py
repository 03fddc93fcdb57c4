"""Tests for MessageAccumulator against real transcripts and the SDK oracle (see conftest)."""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path
from typing import Any

from streaming.accumulator import MessageAccumulator
from streaming.changes import (
    BlockDelta,
    BlockStopped,
    MessageDelta,
    MessageStarted,
    MessageStopped,
    StreamError,
    UnknownEvent,
)

TRANSCRIPTS = Path(__file__).resolve().parents[2].parent / "shared" / "transcripts"


def start(message_id: str = "msg_1", **extra: Any) -> dict[str, Any]:
    message = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": "claude-test",
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
        **extra,
    }
    return {"type": "message_start", "message": message}


def block_start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def delta(index: int, **body: Any) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": body}


def text(index: int, value: str) -> dict[str, Any]:
    return delta(index, type="text_delta", text=value)


def json_part(index: int, value: str) -> dict[str, Any]:
    return delta(index, type="input_json_delta", partial_json=value)


def stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def message_delta(stop_reason: str = "end_turn", **usage: Any) -> dict[str, Any]:
    return {
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason, "stop_sequence": None},
        "usage": usage or {"output_tokens": 5},
    }


TOOL = {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}


def feed_all(acc: MessageAccumulator, events: list[dict[str, Any]]) -> list[Any]:
    return [change for event in events for change in acc.feed(event)]


def stopped_blocks(changes: list[Any]) -> list[BlockStopped]:
    return [c for c in changes if isinstance(c, BlockStopped)]


# --- every transcript against the SDK oracle -------------------------------------------


def test_final_message_matches_sdk_oracle(message_transcript, load_events, sdk_oracle) -> None:
    events = load_events(message_transcript)
    acc = MessageAccumulator()
    feed_all(acc, events)
    expected, sdk_incomplete = sdk_oracle(events)
    assert acc.message() == expected
    ours = acc.incomplete_blocks()
    assert [i for i, _ in ours] == [i for i, _ in sdk_incomplete]
    for (_, mine), (_, theirs) in zip(ours, sdk_incomplete, strict=True):
        drop = {"partial_json", "input"}
        assert {k: v for k, v in mine.items() if k not in drop} == {
            k: v for k, v in theirs.items() if k not in drop
        }


def test_input_events_are_never_mutated(message_transcript, load_events) -> None:
    events = load_events(message_transcript)
    before = copy.deepcopy(events)
    acc = MessageAccumulator()
    feed_all(acc, events)
    acc.message()
    acc.incomplete_blocks()
    assert events == before


def test_error_only_transcripts(error_transcript, load_events, sdk_oracle) -> None:
    events = load_events(error_transcript)
    acc = MessageAccumulator()
    changes = feed_all(acc, events)
    assert [type(c) for c in changes] == [StreamError]
    assert changes[0].error is events[0]["error"]
    assert acc.error["type"] == "overloaded_error"
    assert not acc.started
    assert acc.message()["content"] == []
    assert sdk_oracle(events) == (None, [])


def test_error_after_blocks_without_message_stop(load_events) -> None:
    events = load_events("vercel-ai-inline__error_event_data_only_after_ping_no_message_stop.sse")
    acc = MessageAccumulator()
    changes = feed_all(acc, events)
    assert isinstance(changes[-1], StreamError)
    assert acc.error == {"type": "error", "message": "test error"}
    assert acc.started and not acc.stopped
    assert acc.message()["content"] == []
    assert acc.incomplete_blocks() == [(0, {"type": "text", "text": ""})]


def test_change_sequence_and_identity(load_events) -> None:
    events = load_events("vercel-ai__text_then_tool_use_ping_inside_block.sse")
    acc = MessageAccumulator()
    changes = []
    for event in events:
        got = acc.feed(event)
        if event["type"] == "content_block_delta":
            assert got == [BlockDelta(event["index"], event["delta"])]
            assert got[0].delta is event["delta"]
        elif event["type"] == "content_block_start":
            assert got[0].block is event["content_block"]
        changes.extend(got)
    kinds = [type(c).__name__ for c in changes]
    assert kinds[0] == "MessageStarted" and kinds[-2:] == ["MessageDelta", "MessageStopped"]
    assert kinds.count("BlockStarted") == kinds.count("BlockStopped") == 2
    assert changes[0] == MessageStarted(events[0]["message"])
    final = acc.message()
    assert [c.block for c in stopped_blocks(changes)] == final["content"]
    md = next(c for c in changes if isinstance(c, MessageDelta))
    assert (md.stop_reason, md.stop_sequence) == ("tool_use", None)
    assert md.usage == final["usage"]
    assert isinstance(changes[-1], MessageStopped) and acc.stopped
    assert acc.stop_reason == "tool_use"


def test_message_snapshot_is_a_copy() -> None:
    acc = MessageAccumulator()
    feed_all(acc, [start(), block_start(0, {"type": "text", "text": ""}), text(0, "hi"), stop(0)])
    snap = acc.message()
    snap["content"].append({"type": "text", "text": "bogus"})
    snap["usage"]["output_tokens"] = 999
    assert acc.message()["content"] == [{"type": "text", "text": "hi"}]
    assert acc.message()["usage"] == {"input_tokens": 10, "output_tokens": 1}


def test_recorded_tool_loop_round_trip(load_events) -> None:
    """The accumulated turn-1 message equals what the SDK echoed back in request 2."""
    acc = MessageAccumulator()
    feed_all(acc, load_events("anthropic-sdk-python-cassette__tool_loop_turn1_tool_use.sse"))
    requests = json.loads(
        (TRANSCRIPTS / "anthropic-sdk-python-cassette__tool_loop_requests.json").read_text()
    )
    assert requests[1]["messages"][1] == {"role": "assistant", "content": acc.message()["content"]}


# --- edge cases from real bug reports --------------------------------------------------


def test_block_that_never_streams_beside_one_that_does(load_events) -> None:
    acc = MessageAccumulator()
    feed_all(acc, load_events("vercel-ai-inline__redacted_thinking_then_text.sse"))
    assert acc.message()["content"] == [
        {"type": "redacted_thinking", "data": "redacted-thinking-data"},
        {"type": "text", "text": "Hello, World!"},
    ]
    acc = MessageAccumulator()
    feed_all(acc, load_events("anthropic-sdk-python__server_tool_use_web_search_then_refusal.sse"))
    kinds = [b["type"] for b in acc.message()["content"]]
    assert kinds == ["server_tool_use", "web_search_tool_result", "text"]
    assert len(acc.message()["content"][1]["content"]) >= 2


def test_stale_blocks_do_not_leak_across_message_start() -> None:
    acc = MessageAccumulator()
    events = [
        start("msg_old"),
        block_start(0, {"type": "text", "text": ""}),
        text(0, "old"),
        stop(0),
        block_start(1, dict(TOOL)),
        json_part(1, '{"a"'),
        start("msg_new"),
        block_start(0, {"type": "text", "text": ""}),
        text(0, "new"),
        stop(0),
    ]
    changes = feed_all(acc, events)
    assert acc.message()["id"] == "msg_new"
    assert acc.message()["content"] == [{"type": "text", "text": "new"}]
    assert acc.incomplete_blocks() == []
    # A late stop for the old message's block 1 does not resurrect it.
    assert acc.feed(stop(1)) == [UnknownEvent(stop(1))]
    assert acc.message()["content"] == [{"type": "text", "text": "new"}]
    assert sum(isinstance(c, MessageStarted) for c in changes) == 2


def test_duplicate_message_start_synthetic(load_events, sdk_oracle) -> None:
    events = load_events("vercel-ai__SYNTHETIC_duplicate_message_start.sse")
    acc = MessageAccumulator()
    changes = feed_all(acc, events)
    assert sum(isinstance(c, MessageStarted) for c in changes) == 2
    assert acc.message()["content"] == [{"type": "text", "text": "Hello, World!"}]
    assert acc.message() == sdk_oracle(events)[0]


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


def test_whitespace_only_fragments_keep_start_input() -> None:
    acc = MessageAccumulator()
    tool = {**TOOL, "input": {"preset": 1}}
    changes = feed_all(acc, [start(), block_start(0, tool), json_part(0, "  "), stop(0)])
    assert stopped_blocks(changes)[0].block["input"] == {"preset": 1}


def test_block_without_stop_is_incomplete_and_absent() -> None:
    acc = MessageAccumulator()
    events = [
        start(),
        block_start(0, {"type": "text", "text": ""}),
        text(0, "Let me "),
        text(0, "look."),
        stop(0),
        block_start(1, {"type": "thinking", "thinking": "", "signature": ""}),
        delta(1, type="thinking_delta", thinking="hmm"),
        block_start(2, dict(TOOL)),
        json_part(2, '{"city": "Par'),
        message_delta("max_tokens"),
        {"type": "message_stop"},
    ]
    feed_all(acc, events)
    assert acc.message()["content"] == [{"type": "text", "text": "Let me look."}]
    assert acc.stop_reason == "max_tokens"
    assert acc.incomplete_blocks() == [
        (1, {"type": "thinking", "thinking": "hmm", "signature": ""}),
        (2, {**TOOL, "partial_json": '{"city": "Par'}),
    ]
    # Snapshots do not consume state: the block can still finish.
    acc.feed(json_part(2, 'is"}'))
    assert stopped_blocks(acc.feed(stop(2)))[0].block["input"] == {"city": "Paris"}


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


def test_signature_delta_replaces(load_events) -> None:
    acc = MessageAccumulator()
    feed_all(acc, load_events("anthropic-sdk-python__thinking_signature_then_refusal.sse"))
    thinking = acc.message()["content"][0]
    assert (
        thinking["signature"]
        == "c3ludGhldGljLXNpZ25hdHVyZS1maXh0dXJlLWEtbm90LWEtcmVhbC1zaWduYXR1cmU="
    )
    assert thinking["thinking"].startswith("Simple educational question")
    acc = MessageAccumulator()
    events = [
        start(),
        block_start(0, {"type": "thinking", "thinking": "", "signature": "initial"}),
        delta(0, type="signature_delta", signature="first"),
        delta(0, type="thinking_delta", thinking="x"),
        delta(0, type="signature_delta", signature="second"),
        stop(0),
    ]
    feed_all(acc, events)
    assert acc.message()["content"] == [
        {"type": "thinking", "thinking": "x", "signature": "second"}
    ]


def test_citations_delta_appends(sdk_oracle) -> None:
    cite_a = {
        "type": "char_location",
        "cited_text": "a",
        "document_index": 0,
        "document_title": None,
        "start_char_index": 0,
        "end_char_index": 1,
    }
    cite_b = {**cite_a, "cited_text": "b", "start_char_index": 1, "end_char_index": 2}
    started = {"type": "text", "text": "", "citations": []}
    events = [
        start(),
        block_start(0, started),
        text(0, "A"),
        delta(0, type="citations_delta", citation=cite_a),
        text(0, "B"),
        delta(0, type="citations_delta", citation=cite_b),
        stop(0),
        message_delta(),
    ]
    acc = MessageAccumulator()
    feed_all(acc, events)
    assert acc.message()["content"] == [
        {"type": "text", "text": "AB", "citations": [cite_a, cite_b]}
    ]
    assert started["citations"] == []  # the upstream list is not appended to
    assert acc.message() == sdk_oracle(events)[0]


def test_unknown_event_type_kept_verbatim() -> None:
    acc = MessageAccumulator()
    feed_all(acc, [start()])
    event = {"type": "message_annotation", "payload": {"x": 1}}
    (change,) = acc.feed(event)
    assert isinstance(change, UnknownEvent) and change.event is event
    assert acc.feed({"no_type": True}) == [UnknownEvent({"no_type": True})]
    assert acc.feed({"type": "ping"}) == []


def test_delta_or_stop_for_unknown_index_is_ignored() -> None:
    acc = MessageAccumulator()
    feed_all(acc, [start(), block_start(0, {"type": "text", "text": ""}), text(0, "a"), stop(0)])
    for event in [
        text(0, "late"),
        stop(0),
        text(5, "x"),
        stop(5),
        text("0", "x"),
        {"type": "content_block_delta", "index": 0},
        block_start(None, {}),
    ]:
        assert acc.feed(event) == [UnknownEvent(event)]
    assert acc.message()["content"] == [{"type": "text", "text": "a"}]


def test_compaction_delta_merged(load_events, sdk_oracle) -> None:
    events = load_events("anthropic-sdk-python__compaction_block.sse")
    acc = MessageAccumulator()
    feed_all(acc, events)
    assert acc.message()["content"] == [
        {
            "type": "compaction",
            "content": "Earlier conversation summarized.",
            "encrypted_content": "EpwBCioIDxgCEAEYASJALd_opaque_compaction_payload",
        },
        {"type": "text", "text": "Hello there!"},
    ]


def test_unknown_delta_concatenates_strings_and_sets_others() -> None:
    acc = MessageAccumulator()
    events = [
        start(),
        block_start(0, {"type": "mystery", "summary": "", "payload": None, "n": 1}),
        delta(0, type="mystery_delta", summary="part one, ", payload="p1"),
        delta(0, type="mystery_delta", summary="part two", payload="p2", n=2),
        delta(0, type="mystery_delta", n=[3]),
        stop(0),
    ]
    feed_all(acc, events)
    assert acc.message()["content"] == [
        {"type": "mystery", "summary": "part one, part two", "payload": "p1p2", "n": [3]}
    ]


def test_usage_from_message_delta_overrides_input_tokens(load_events) -> None:
    acc = MessageAccumulator()
    feed_all(acc, load_events("vercel-ai__message_delta_updates_input_tokens.sse"))
    assert acc.message()["usage"] == {"input_tokens": 61, "output_tokens": 2}


def test_usage_null_or_absent_keeps_message_start_value() -> None:
    acc = MessageAccumulator()
    feed_all(
        acc, [start(), message_delta(input_tokens=None, output_tokens=7, server_tool_use=None)]
    )
    assert acc.usage == {"input_tokens": 10, "output_tokens": 7}


def test_stop_details_and_container() -> None:
    acc = MessageAccumulator()
    container = {"id": "cont_1", "expires_at": "2026-01-01T00:00:00Z"}
    feed_all(acc, [start(container=container)])
    details = {"type": "refusal", "category": "cyber", "explanation": None}
    changes = acc.feed(
        {
            "type": "message_delta",
            "delta": {
                "stop_reason": "refusal",
                "stop_sequence": None,
                "stop_details": details,
                "container": None,
            },
            "usage": {"output_tokens": 0},
        }
    )
    message = acc.message()
    assert message["stop_details"] == details
    assert message["container"] == container
    assert changes[0].stop_reason == "refusal"


def test_events_before_message_start_do_not_crash() -> None:
    acc = MessageAccumulator()
    feed_all(acc, [block_start(0, {"type": "text", "text": ""}), text(0, "x"), stop(0)])
    assert not acc.started
    assert acc.message()["content"] == [{"type": "text", "text": "x"}]


def test_restarted_index_replaces_block() -> None:
    acc = MessageAccumulator()
    events = [
        start(),
        block_start(1, {"type": "text", "text": "b"}),
        stop(1),
        block_start(0, {"type": "text", "text": "a"}),
        stop(0),
        block_start(1, {"type": "text", "text": "B"}),
        stop(1),
    ]
    feed_all(acc, events)
    assert acc.message()["content"] == [
        {"type": "text", "text": "a"},
        {"type": "text", "text": "B"},
    ]


def test_many_deltas_cost_stays_linear() -> None:
    """A guard against per-delta work that grows with the message (e.g. re-joining)."""

    def run(n: int) -> float:
        acc = MessageAccumulator()
        acc.feed(start())
        acc.feed(block_start(0, {"type": "text", "text": ""}))
        acc.feed(block_start(1, dict(TOOL)))
        events = [text(0, "word ") for _ in range(n)] + [json_part(1, " ") for _ in range(n)]
        began = time.perf_counter()
        for event in events:
            acc.feed(event)
        acc.feed(stop(0))
        acc.feed(stop(1))
        return (time.perf_counter() - began) / (2 * n)

    small, large = min(run(2_000) for _ in range(3)), min(run(50_000) for _ in range(2))
    assert large < 20e-6
    assert large < small * 5

"""MessageAccumulator on every transcript, against the SDK's own accumulator as an oracle."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from streaming.messages.accumulator import MessageAccumulator
from streaming.messages.effects import (
    BlockDelta,
    MessageDelta,
    MessageStarted,
    MessageStopped,
    StreamError,
)
from tests.streaming.events import (
    block_start,
    feed_all,
    start,
    stop,
    stopped_blocks,
    text,
)

TRANSCRIPTS = Path(__file__).resolve().parents[2].parent / "shared" / "transcripts"


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

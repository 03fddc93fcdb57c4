"""MessageAccumulator edge cases, many from real bug reports in other systems."""

from __future__ import annotations

from pathlib import Path

from streaming.messages.accumulator import MessageAccumulator
from streaming.messages.effects import (
    MessageStarted,
    UnknownEvent,
)
from tests.streaming.events import (
    TOOL,
    block_start,
    delta,
    feed_all,
    json_part,
    message_delta,
    start,
    stop,
    stopped_blocks,
    text,
)

TRANSCRIPTS = Path(__file__).resolve().parents[2].parent / "shared" / "transcripts"


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


def test_long_blocks_are_held_as_few_strings_and_join_exactly() -> None:
    """Thousands of fragments fold into chunks; snapshots and the final block are exact."""
    from streaming.messages.accumulator import FOLD

    acc = MessageAccumulator()
    words = [f"w{i}é " for i in range(3000)]
    parts = [f'{{"n": {i}, "s": "é\\u2028"}}, ' for i in range(1000)]
    feed_all(acc, [start(), block_start(0, {"type": "text", "text": "<"}), block_start(1, TOOL)])
    feed_all(acc, [json_part(1, '{"rows": [')])
    for i, word in enumerate(words):
        acc.feed(text(0, word))
        if i < len(parts):
            acc.feed(json_part(1, parts[i]))
        if i == 1234:
            snapshot = dict(acc.incomplete_blocks())
            assert snapshot[0]["text"] == "<" + "".join(words[:1235])
    held = acc._open[0].frags["text"]
    assert len(held.chunks) + len(held.tail) <= len(words) // FOLD + FOLD
    feed_all(acc, [json_part(1, "0]}")])
    blocks = stopped_blocks(feed_all(acc, [stop(0), stop(1)]))
    assert blocks[0].block["text"] == "<" + "".join(words)
    assert len(blocks[1].block["input"]["rows"]) == len(parts) + 1

"""Property tests: chunking, fragment splitting and pings never change the result."""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streaming.messages.accumulator import MessageAccumulator
from streaming.wire.sse import SSEDecoder, SSEEvent, iter_json_events

TRANSCRIPTS = Path(__file__).resolve().parents[2].parent / "shared" / "transcripts"

# Parametrized per transcript, so each file gets this many examples.
PER_FILE = settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

SPLITTABLE = {
    "text_delta": "text",
    "thinking_delta": "thinking",
    "input_json_delta": "partial_json",
}

EXHAUSTIVE = [
    "anthropic-sdk-python-inline__utf8_multibyte_split_across_chunks.sse",
    "anthropic-sdk-python-inline__u2028_line_separator_inside_data.sse",
    "vercel-ai-inline__redacted_thinking_then_text.sse",
    "vercel-ai__tool_use_empty_input.sse",
    "anthropic-sdk-python__basic_text_with_ping.sse",
]


def decode(chunks: list[bytes]) -> list[SSEEvent]:
    decoder = SSEDecoder()
    events = [event for chunk in chunks for event in decoder.feed(chunk)]
    decoder.flush()
    return events


def final(events: list[dict[str, Any]]) -> tuple[dict[str, Any], list[Any]]:
    acc = MessageAccumulator()
    for event in events:
        acc.feed(event)
    return acc.message(), acc.incomplete_blocks()


def split_at(raw: bytes, cuts: list[int]) -> list[bytes]:
    bounds = [0, *sorted(cuts), len(raw)]
    return [raw[a:b] for a, b in pairwise(bounds)]


def chunkings(size: int) -> st.SearchStrategy[list[int]]:
    """Cut points: arbitrary positions, or a fixed small chunk size."""
    arbitrary = st.lists(st.integers(0, size), max_size=40)
    fixed = st.integers(1, 9).map(lambda step: list(range(step, size, step)))
    return st.one_of(arbitrary, fixed)


# --- (a) re-splitting the raw bytes ----------------------------------------------------


@PER_FILE
@given(data=st.data())
def test_byte_chunking_never_changes_events_or_message(transcript, load_bytes, data) -> None:
    raw = load_bytes(transcript)
    expected_events = decode([raw])
    expected = final(list(iter_json_events([raw])))
    chunks = split_at(raw, data.draw(chunkings(len(raw)), label="cuts"))
    assert decode(chunks) == expected_events
    assert final(list(iter_json_events(chunks))) == expected


@pytest.mark.parametrize("name", EXHAUSTIVE)
@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
def test_every_single_split_point(name: str, newline: bytes, load_bytes) -> None:
    raw = load_bytes(name).replace(b"\n", newline)
    expected_events = decode([raw])
    expected = final(list(iter_json_events([raw])))
    for cut in range(len(raw) + 1):
        chunks = [raw[:cut], raw[cut:]]
        assert decode(chunks) == expected_events, cut
        assert final(list(iter_json_events(chunks))) == expected, cut


def test_every_pair_of_split_points_on_utf8_transcript(load_bytes) -> None:
    raw = load_bytes(EXHAUSTIVE[0])
    expected = decode([raw])
    for first in range(len(raw) + 1):
        for second in range(first, len(raw) + 1):
            assert decode([raw[:first], raw[first:second], raw[second:]]) == expected


# --- (b) re-splitting text / thinking / input_json fragments ---------------------------


def resplit(events: list[dict[str, Any]], data: st.DataObject) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for event in events:
        delta = event.get("delta") if event.get("type") == "content_block_delta" else None
        key = SPLITTABLE.get(delta.get("type")) if isinstance(delta, dict) else None
        if key is None:
            out.append(event)
            continue
        value = delta[key]
        cuts = data.draw(st.lists(st.integers(0, len(value)), max_size=4))
        bounds = [0, *sorted(cuts), len(value)]
        out.extend({**event, "delta": {**delta, key: value[a:b]}} for a, b in pairwise(bounds))
    return out


@PER_FILE
@given(data=st.data())
def test_fragment_splitting_matches_original_and_sdk(
    message_transcript, load_events, sdk_oracle, data
) -> None:
    events = load_events(message_transcript)
    expected = final(events)
    split = resplit(events, data)
    assert final(split) == expected
    assert expected[0] == sdk_oracle(split)[0]


# --- (c) pings and keep-alives anywhere ------------------------------------------------

PING = {"type": "ping"}


def to_sse(events: list[dict[str, Any]], named: list[bool], comments: list[bool]) -> bytes:
    parts = []
    for event, with_name, with_comment in zip(events, named, comments, strict=True):
        if with_comment:
            parts.append(b": keep-alive\n\n")
        name = f"event: {event['type']}\n" if with_name else ""
        parts.append(f"{name}data: {json.dumps(event)}\n\n".encode())
    return b"".join(parts)


@PER_FILE
@given(data=st.data())
def test_pings_and_keepalives_anywhere_change_nothing(message_transcript, load_events, data):
    events = load_events(message_transcript)
    expected = final(events)
    positions = data.draw(st.lists(st.integers(0, len(events)), max_size=12), label="pings")
    noisy = list(events)
    for position in sorted(positions, reverse=True):
        noisy.insert(position, PING)
    assert final(noisy) == expected
    flags = st.lists(st.booleans(), min_size=len(noisy), max_size=len(noisy))
    raw = to_sse(noisy, data.draw(flags, label="named"), data.draw(flags, label="comments"))
    chunks = split_at(raw, data.draw(chunkings(len(raw)), label="cuts"))
    assert final(list(iter_json_events(chunks))) == expected

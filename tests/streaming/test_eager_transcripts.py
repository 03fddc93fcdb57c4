"""Eager tool input transcripts: the accumulator's verdict, whole and re-split at every byte."""

from __future__ import annotations

from typing import Any

import pytest

from streaming.messages.accumulator import MessageAccumulator
from streaming.messages.effects import BlockStopped
from streaming.wire.sse import iter_json_events
from tests.helpers import OWN_TRANSCRIPTS

NAMES = ["eager_invalid_json.sse", "eager_cut_by_max_tokens.sse", "eager_cut_never_stopped.sse"]


def outcome(chunks: list[bytes]) -> tuple[Any, ...]:
    """Everything a round acts on: the message, open blocks, and each stop's error and raw."""
    acc = MessageAccumulator()
    stops = []
    for event in iter_json_events(chunks):
        for change in acc.feed(event):
            if isinstance(change, BlockStopped):
                stops.append((change.index, change.error, change.raw))
    return acc.message(), acc.incomplete_blocks(), stops


def test_invalid_json_stops_with_the_parser_message_and_the_raw_text() -> None:
    message, open_blocks, stops = outcome([(OWN_TRANSCRIPTS / NAMES[0]).read_bytes()])
    assert open_blocks == []
    assert message["stop_reason"] == "tool_use"
    assert message["content"][1]["input"] == {}
    index, error, raw = stops[1]
    assert index == 1 and error is not None and error.startswith("tool input was not valid JSON")
    assert raw == '{"location": "Zürich \\"Altstadt\\", CH", "units": c}'


def test_a_cut_stopped_call_has_an_error_and_a_never_stopped_one_stays_open() -> None:
    message, open_blocks, stops = outcome([(OWN_TRANSCRIPTS / NAMES[1]).read_bytes()])
    assert message["stop_reason"] == "max_tokens" and open_blocks == []
    assert stops[1][2] == '{"location": "The Embarcadero, San Francisco, CA, at the foot of Mark'
    message, open_blocks, stops = outcome([(OWN_TRANSCRIPTS / NAMES[2]).read_bytes()])
    assert message["stop_reason"] == "max_tokens"
    assert [b["type"] for b in message["content"]] == ["text"]
    assert [(i, b["partial_json"]) for i, b in open_blocks] == [(1, '{"location": "Oslo, Norw')]


@pytest.mark.parametrize("name", NAMES)
def test_every_single_split_point_gives_the_same_outcome(name: str) -> None:
    raw = (OWN_TRANSCRIPTS / name).read_bytes()
    expected = outcome([raw])
    for cut in range(len(raw) + 1):
        assert outcome([raw[:cut], raw[cut:]]) == expected, cut

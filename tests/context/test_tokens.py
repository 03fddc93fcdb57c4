"""The token estimate: deterministic, conservative, blind to markers; usage sums."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from engine.upstream.estimate import (
    block_tokens,
    message_tokens,
    request_tokens,
    usage_input_tokens,
    usage_tokens,
)
from tests.cachesim.rules import tokens_of

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
blocks = st.dictionaries(st.text(min_size=1), json_values, max_size=5).map(
    lambda extra: {"type": "text", "text": "x", **extra}
)


@given(blocks)
def test_the_estimate_is_never_below_a_bytes_over_four_tokenizer(block: dict[str, Any]) -> None:
    # The cache simulator bills ceil(UTF-8 bytes / 4): the estimate must not find fewer.
    assert block_tokens(block) >= tokens_of(block)


@given(st.text(), st.text())
def test_longer_text_never_costs_less(text: str, more: str) -> None:
    short = {"type": "text", "text": text}
    long = {"type": "text", "text": text + more}
    assert block_tokens(long) >= block_tokens(short)


def test_non_ascii_text_counts_more_than_ascii_of_the_same_length() -> None:
    ascii_block = {"type": "text", "text": "a" * 300}
    for text in ("é" * 300, "語" * 300, "😀" * 300):
        assert block_tokens({"type": "text", "text": text}) > block_tokens(ascii_block)


def test_markers_never_change_an_estimate() -> None:
    block = {"type": "text", "text": "How much did I spend?"}
    marked = {**block, "cache_control": {"type": "ephemeral", "ttl": "1h"}}
    assert block_tokens(marked) == block_tokens(block)


def test_string_content_counts_as_the_text_block_the_api_reads() -> None:
    text = "What did I spend on groceries last month?"
    as_string = {"role": "user", "content": text}
    as_block = {"role": "user", "content": [{"type": "text", "text": text}]}
    assert message_tokens(as_string) == message_tokens(as_block)


def test_a_request_counts_tools_system_and_messages() -> None:
    tool = {"name": "t", "description": "d" * 90, "input_schema": {"type": "object"}}
    system = [{"type": "text", "text": "s" * 60}]
    message = {"role": "user", "content": "q" * 30}
    whole = request_tokens({"tools": [tool], "system": system, "messages": [message]})
    parts = block_tokens(tool) + block_tokens(system[0]) + message_tokens(message)
    assert whole == parts
    assert request_tokens({"system": "s" * 60, "messages": []}) == block_tokens(system[0])


def test_usage_sums_every_input_field_and_ignores_junk() -> None:
    usage = {
        "input_tokens": 12,
        "cache_creation_input_tokens": 300,
        "cache_read_input_tokens": 4000,
        "output_tokens": 50,
        "cache_creation": {"ephemeral_5m_input_tokens": 300},
        "server_tool_use": None,
    }
    assert usage_input_tokens(usage) == 12 + 300 + 4000
    assert usage_tokens(usage) == 12 + 300 + 4000 + 50
    junk = {"input_tokens": "12", "output_tokens": True, "cache_read_input_tokens": -5}
    assert usage_input_tokens(junk) == usage_tokens(junk) == 0
    assert usage_input_tokens(None) == 0

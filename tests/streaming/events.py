"""Raw event builders shared by the accumulator tests."""

from __future__ import annotations

from typing import Any

from streaming.messages.accumulator import MessageAccumulator
from streaming.messages.effects import BlockStopped


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

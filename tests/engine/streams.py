"""Raw Anthropic stream builders for engine tests."""

from __future__ import annotations

from typing import Any


def message_start(message_id: str) -> dict[str, Any]:
    """A message_start event."""
    return {
        "type": "message_start",
        "message": {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": "m",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 5, "output_tokens": 1},
        },
    }


def message_end(stop: str, output_tokens: int) -> list[dict[str, Any]]:
    """The message_delta and message_stop events."""
    return [
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": output_tokens},
        },
        {"type": "message_stop"},
    ]


def text_block(index: int, text: str) -> list[dict[str, Any]]:
    """A whole text block."""
    return [
        {
            "type": "content_block_start",
            "index": index,
            "content_block": {"type": "text", "text": ""},
        },
        {
            "type": "content_block_delta",
            "index": index,
            "delta": {"type": "text_delta", "text": text},
        },
        {"type": "content_block_stop", "index": index},
    ]


def tool_use(
    tool_id: str,
    name: str,
    fragments: list[str],
    stop: str = "tool_use",
    close: bool = True,
    text: str | None = None,
) -> list[dict[str, Any]]:
    """A raw stream with an optional text block then one tool_use block."""
    events = [message_start(f"msg_{tool_id}")]
    index = 0
    if text is not None:
        events += text_block(0, text)
        index = 1
    events.append(
        {
            "type": "content_block_start",
            "index": index,
            "content_block": {"type": "tool_use", "id": tool_id, "name": name, "input": {}},
        }
    )
    events += [
        {
            "type": "content_block_delta",
            "index": index,
            "delta": {"type": "input_json_delta", "partial_json": f},
        }
        for f in fragments
    ]
    if close:
        events.append({"type": "content_block_stop", "index": index})
    return events + message_end(stop, 9)


def answer(text: str, stop: str = "end_turn") -> list[dict[str, Any]]:
    """A raw stream with one text block."""
    return [message_start("msg_a"), *text_block(0, text), *message_end(stop, 3)]

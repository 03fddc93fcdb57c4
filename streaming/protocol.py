"""Wire encoding of our server's SSE events to clients."""

from __future__ import annotations

import json
from typing import Any

from streaming.sse import SSEDecoder

__all__ = [
    "BLOCK_DELTA",
    "BLOCK_END",
    "BLOCK_START",
    "ERROR",
    "KEEPALIVE",
    "MESSAGE_DISCARDED",
    "MESSAGE_END",
    "MESSAGE_START",
    "TOOL_RESULT",
    "TURN_END",
    "TURN_START",
    "decode_stream",
    "encode_event",
]

TURN_START = "turn_start"
MESSAGE_START = "message_start"
BLOCK_START = "block_start"
BLOCK_DELTA = "block_delta"
BLOCK_END = "block_end"
MESSAGE_END = "message_end"
TOOL_RESULT = "tool_result"
ERROR = "error"
TURN_END = "turn_end"
MESSAGE_DISCARDED = "message_discarded"

KEEPALIVE = b": keep-alive\n\n"


def encode_event(seq: int, event_type: str, data: dict[str, Any]) -> bytes:
    """Encode one event as `id`, `event` and a single compact JSON `data` line."""
    payload = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    # json.dumps escapes CR/LF inside strings, so this only trips on a bad event_type;
    # U+2028 and friends may stay raw because SSE splits lines on CR/LF only.
    if "\n" in payload or "\r" in payload or "\n" in event_type or "\r" in event_type:
        raise ValueError("SSE field would span lines")
    try:
        return f"id: {int(seq)}\nevent: {event_type}\ndata: {payload}\n\n".encode()
    except UnicodeEncodeError:
        # Lone surrogates (e.g. from a "\\ud83d" escape upstream) cannot be UTF-8 encoded;
        # ASCII-escaped JSON still round-trips them.
        payload = json.dumps(data, separators=(",", ":"))
        return f"id: {int(seq)}\nevent: {event_type}\ndata: {payload}\n\n".encode()


def decode_stream(raw: bytes) -> list[tuple[int, str, dict[str, Any]]]:
    """Decode our own SSE output into (seq, event_type, data) tuples; comments are skipped."""
    decoder = SSEDecoder()
    events = decoder.feed(raw)
    decoder.flush()
    return [
        (
            int(event.id) if event.id is not None else -1,
            event.event or "message",
            json.loads(event.data),
        )
        for event in events
    ]

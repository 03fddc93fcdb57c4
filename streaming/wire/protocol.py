"""Our wire protocol: the SSE encoding of every event (wire/events.py), the error shape."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import orjson

from streaming.wire.events import (
    APPROVAL_REQUESTED,
    APPROVAL_RESOLVED,
    BLOCK_DELTA,
    BLOCK_END,
    BLOCK_START,
    CONTEXT_TRIMMED,
    ERROR,
    EVENT_TYPES,
    MESSAGE_DISCARDED,
    MESSAGE_END,
    MESSAGE_START,
    PROGRESS,
    TOOL_RESULT,
    TURN_END,
    TURN_START,
)
from streaming.wire.sse import SSEDecoder

__all__ = [
    "APPROVAL_REQUESTED",
    "APPROVAL_RESOLVED",
    "BLOCK_DELTA",
    "BLOCK_END",
    "BLOCK_START",
    "CONTEXT_TRIMMED",
    "ERROR",
    "EVENT_TYPES",
    "KEEPALIVE",
    "MESSAGE_DISCARDED",
    "MESSAGE_END",
    "MESSAGE_START",
    "PROGRESS",
    "TOOL_RESULT",
    "TURN_END",
    "TURN_START",
    "decode_stream",
    "encode_event",
    "error_body",
    "error_json",
]

KEEPALIVE = b": keep-alive\n\n"


def encode_event(seq: int, event_type: str, data: Mapping[str, Any]) -> bytes:
    """Encode one event as `id`, `event` and a single compact JSON `data` line."""
    if event_type not in _REGISTERED:
        raise ValueError(f"{event_type!r} is not a registered event type (EVENT_TYPES)")
    try:
        # orjson escapes CR and LF inside strings (as JSON must) about 20x faster than json.
        payload = orjson.dumps(data)
    except (TypeError, orjson.JSONEncodeError):
        # Lone surrogates (from a "\\ud83d" escape upstream) or huge integers: ASCII-escaped
        # JSON still carries them.
        payload = json.dumps(data, separators=(",", ":")).encode()
    # SSE splits lines on CR/LF only, but readers built on str.splitlines() also split on
    # U+2028, U+2029 and U+0085: escape those too, so every client sees one data line.
    # (Their UTF-8 forms start with lead bytes, so they can only be those characters.)
    for raw, escaped in _LINE_BREAKS:
        if raw in payload:
            payload = payload.replace(raw, escaped)
    return b"id: %d\nevent: %s\ndata: %s\n\n" % (int(seq), event_type.encode(), payload)


_REGISTERED = frozenset(EVENT_TYPES)
_LINE_BREAKS = (
    ("\u2028".encode(), b"\\u2028"),
    ("\u2029".encode(), b"\\u2029"),
    ("\x85".encode(), b"\\u0085"),
)


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


def error_body(code: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    """The one error shape of every 4xx and 5xx: {"error": {"code", "message", "details"}}."""
    return {"error": {"code": code, "message": message, "details": details or {}}}


def error_json(code: str, message: str, details: dict[str, Any] | None = None) -> bytes:
    """The error shape as JSON bytes (for a server answering without the app)."""
    return orjson.dumps(error_body(code, message, details))

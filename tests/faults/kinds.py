"""Fault kinds a FaultyUpstream can apply to one reply, and the pure event edits they need."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from demo_model.wire import sse

RETRYABLE = {408, 409, 429, 529}
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
MESSAGES = {
    "invalid_request_error": "There was an issue with the format or content of your request.",
    "authentication_error": "invalid x-api-key",
    "permission_error": "Your API key does not have permission to use the specified resource.",
    "not_found_error": "The requested resource could not be found.",
    "request_too_large": "Request exceeds the maximum allowed number of bytes.",
    "rate_limit_error": "This request would exceed your organization's rate limit.",
    "api_error": "Internal server error",
    "overloaded_error": "Overloaded",
}


@dataclass(frozen=True)
class Normal:
    """Serve the whole reply, sleeping `delay` seconds between events."""

    delay: float = 0.0


@dataclass(frozen=True)
class Status:
    """Answer with an HTTP error status and the API's JSON error body."""

    code: int
    retry_after: float | None = None
    error_type: str | None = None  # None: the type the API uses for `code`
    message: str | None = None  # None: the API's usual message for the type

    def api_error_type(self) -> str:
        """Return the error type this status is reported with."""
        return self.error_type or ERROR_TYPES.get(self.code, "api_error")


@dataclass(frozen=True)
class ErrorAfter:
    """Send `n` events, then an `event: error`, then end the body normally."""

    n: int
    error_type: str = "overloaded_error"


@dataclass(frozen=True)
class ResetAfter:
    """Send `n` events (`delay` seconds apart), then abort the TCP connection with an RST."""

    n: int
    delay: float = 0.0


@dataclass(frozen=True)
class StallAfter:
    """Send `n` events, go quiet (or only ping) for `seconds`, then close mid-body."""

    n: int
    seconds: float
    pings: bool = False


@dataclass(frozen=True)
class CutToolAtMaxTokens:
    """Stop the first tool_use block (else the last text block) mid-JSON at max_tokens."""


@dataclass(frozen=True)
class Transcript:
    """Serve raw SSE bytes (or a file's bytes) verbatim, `delay` seconds between events."""

    source: str | Path | bytes
    delay: float = 0.0

    def data(self) -> bytes:
        """Return the bytes to serve."""
        if isinstance(self.source, bytes):
            return self.source
        return Path(self.source).read_bytes()


Fault = Normal | Status | ErrorAfter | ResetAfter | StallAfter | CutToolAtMaxTokens | Transcript

PING = sse("ping", {"type": "ping"})


def error_body(error_type: str, request_id: str, message: str | None = None) -> dict[str, Any]:
    """Return the API's JSON error body for `error_type`."""
    text = message or MESSAGES.get(error_type, "Error")
    return {
        "type": "error",
        "error": {"type": error_type, "message": text},
        "request_id": request_id,
    }


def error_event(error_type: str) -> bytes:
    """Return an in-stream `event: error` like the API sends after a 200."""
    message = MESSAGES.get(error_type, "Error")
    return sse("error", {"type": "error", "error": {"type": error_type, "message": message}})


def split_events(data: bytes) -> list[bytes]:
    """Split SSE bytes after each blank line; the pieces join back to `data`."""
    pieces, start = [], 0
    while (end := data.find(b"\n\n", start)) != -1:
        pieces.append(data[start : end + 2])
        start = end + 2
    if start < len(data):
        pieces.append(data[start:])
    return pieces


def event_data(event: bytes) -> dict[str, Any]:
    """Return the JSON of an event's `data:` line ({} when it has none)."""
    for line in event.decode().splitlines():
        if line.startswith("data:"):
            return json.loads(line[5:])
    return {}


def cut_at_max_tokens(events: list[bytes]) -> list[bytes]:
    """Return `events` cut inside one block, ending with stop_reason max_tokens."""
    parsed = [event_data(e) for e in events]
    starts = {
        d["index"]: d["content_block"]["type"]
        for d in parsed
        if d.get("type") == "content_block_start"
    }
    tools = [i for i, kind in starts.items() if kind == "tool_use"]
    texts = [i for i, kind in starts.items() if kind == "text"]
    if not tools and not texts:
        return events
    target = tools[0] if tools else texts[-1]
    first = next(
        k
        for k, d in enumerate(parsed)
        if d.get("type") == "content_block_start" and d["index"] == target
    )
    deltas = [
        e
        for e, d in zip(events, parsed, strict=True)
        if d.get("type") == "content_block_delta" and d["index"] == target
    ]
    tail = next(d for d in parsed if d.get("type") == "message_delta")
    stop = {**tail, "delta": {**tail["delta"], "stop_reason": "max_tokens"}}
    return [
        *events[: first + 1],
        *deltas[: len(deltas) // 2],
        sse("message_delta", stop),
        sse("message_stop", {"type": "message_stop"}),
    ]

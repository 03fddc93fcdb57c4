"""Turn a turn's event log into a text/event-stream response that replays and follows."""

from __future__ import annotations

import time
from collections.abc import Iterator

from flask import Response, current_app, request

from engine.service import TurnService
from routes.errors import APIError
from streaming.protocol import KEEPALIVE

SSE_HEADERS = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
# After this long without events a reader also asks the database whether the turn ended.
IDLE_CHECK = 1.0


def last_event_id() -> int:
    """Return the reader's position from `Last-Event-ID` or `?last_event_id=`, default 0."""
    raw = request.headers.get("Last-Event-ID") or request.args.get("last_event_id") or "0"
    try:
        value = int(raw.strip())
    except ValueError as err:
        raise APIError(400, "invalid_last_event_id", "Last-Event-ID must be an integer.") from err
    if value < 0:
        raise APIError(400, "invalid_last_event_id", "Last-Event-ID must not be negative.")
    return value


def event_stream(turns: TurnService, turn_id: str, after: int) -> Response:
    """Stream the events after `after`, then follow live until the turn ends."""
    keepalive = current_app.config["KEEPALIVE_SECONDS"]

    def generate() -> Iterator[bytes]:
        position, idle_since = after, time.monotonic()
        while True:
            idle = time.monotonic() - idle_since >= IDLE_CHECK
            chunk = turns.read(turn_id, position, keepalive, check_store=idle)
            if chunk.frames:
                yield chunk.frames
                position, idle_since = chunk.last_seq, time.monotonic()
            elif not chunk.finished:
                yield KEEPALIVE
            # A finished chunk with nothing more to give ends the stream, never a busy loop.
            if chunk.finished and (position >= chunk.last_seq or not chunk.frames):
                return

    return Response(generate(), mimetype="text/event-stream", headers=SSE_HEADERS)

"""Turn a turn's event log into a text/event-stream response that replays and follows."""

from __future__ import annotations

import time
from collections.abc import Iterator

from flask import Response, current_app, g, request

from engine.turns.service import TurnService
from routes.errors import APIError
from server.shapes import Frames
from streaming.protocol import KEEPALIVE

SSE_HEADERS = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
RELAY_HEADER = "X-Relay-Turn"


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
    """Stream the events after `after`, then follow live until the turn ends.

    A finished turn with nothing after `after` answers 204: the SSE spec's way to tell an
    EventSource to stop reconnecting. When this worker drains (a deploy), the stream ends
    without turn_end and the client reconnects, with Last-Event-ID, to another worker.
    """
    timings = turns.timings
    first = turns.read(turn_id, after, 0, check_store=True)
    if first.finished and (not first.frames or first.last_seq <= after):
        return Response(status=204, headers=SSE_HEADERS)
    if request.environ.get("asgi.scope", {}).get("relay"):
        # Behind the ASGI front: the event loop streams it (server/stream.py), no thread.
        marker = {RELAY_HEADER: f"{turn_id} {after}"}
        return Response(mimetype="text/event-stream", headers={**SSE_HEADERS, **marker})

    watcher, token_id = current_app.extensions["token_watcher"], g.get("token_id")

    def generate() -> Iterator[bytes]:
        if token_id is None:
            yield from follow()
            return
        watcher.open(token_id)
        try:
            for body in follow():
                refusal = watcher.dead(token_id)
                if refusal is not None:
                    yield Frames().refuse(*refusal)
                    return
                yield body
        finally:
            watcher.close(token_id)

    def follow() -> Iterator[bytes]:
        chunk, position = first, after
        idle_since = wrote_at = time.monotonic()
        while True:
            now = time.monotonic()
            if chunk.frames:
                yield chunk.frames
                position, idle_since, wrote_at = chunk.last_seq, now, now
            elif not chunk.finished and now - wrote_at >= timings.keepalive:
                yield KEEPALIVE
                wrote_at = now
            # A finished chunk with nothing more to give ends the stream, never a busy loop.
            if chunk.finished and (position >= chunk.last_seq or not chunk.frames):
                return
            if turns.draining:
                return
            idle = now - idle_since >= timings.idle_check
            wait = min(timings.keepalive, timings.idle_check)
            chunk = turns.read(turn_id, position, wait, check_store=idle)

    return Response(generate(), mimetype="text/event-stream", headers=SSE_HEADERS)

"""Turn a turn's event log into a text/event-stream response that replays and follows."""

from __future__ import annotations

import time
from collections.abc import Iterator

from flask import Response, current_app, g, request

from engine.events.log import Chunk
from engine.turns.service import TurnService
from routes.errors import APIError
from server.shapes import Frames
from streaming.protocol import KEEPALIVE, decode_stream

SSE_HEADERS = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
RELAY_HEADER = "X-Relay-Turn"
EVENTS_DOC = (
    "`text/event-stream`: the events after Last-Event-ID, then live ones until `turn_end`. "
    "An id past the last event written so far is 416 `last_event_id_out_of_range` (except "
    "for a turn rebuilt from storage, which any reader gets anew with `reset: true`)."
)


def event_stream(turns: TurnService, turn_id: str, after: int, started: bool = False) -> Response:
    """Stream the events after `after`, then follow live until the turn ends.

    A finished turn with nothing after `after` answers 204: the SSE spec's way to tell an
    EventSource to stop reconnecting. When this worker drains (a deploy), the stream ends
    without turn_end and the client reconnects, with Last-Event-ID, to another worker.
    `started`: the caller just started the turn, from event 0, so no 204 can apply and
    nothing need be read (or looked up in the database) before answering.
    """
    timings = turns.timings
    if started:
        first = Chunk(b"", after, False)
    else:
        if after:
            _check_in_range(turns, turn_id, after)
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


def _check_in_range(turns: TurnService, turn_id: str, after: int) -> None:
    """Refuse an id past the last event written so far: no client can have seen it."""
    written = turns.read(turn_id, 0, 0, check_store=True)
    if not (written.finished or written.frames):
        return  # a log this worker cannot see yet: let the stream wait for it
    first = decode_stream(written.frames.split(b"\n\n", 1)[0] + b"\n\n")
    if first and first[0][2].get("replayed"):
        return  # rebuilt from storage: any position gets it renumbered after it, with `reset`
    if after > written.last_seq:
        raise APIError(
            416,
            "last_event_id_out_of_range",
            f"Last-Event-ID {after} is past the turn's last event ({written.last_seq}).",
            {"last_event_id": after, "last_available": written.last_seq},
        )

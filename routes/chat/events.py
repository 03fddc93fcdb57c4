"""Event-stream responses: a turn's events after Last-Event-ID, then live, until it ends."""

from __future__ import annotations

from flask import Response, g, request

from domain.errors import RangeNotSatisfiable
from routes.extensions import get_engine, get_token_guard, get_turns
from streaming.hosting import STREAM_HOOK, BodyFactory
from streaming.shapes import Frames
from streaming.wire.protocol import decode_stream
from telemetry import access

SSE_HEADERS = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}

EVENTS_DOC = (
    "`text/event-stream`: the events after Last-Event-ID, then live ones until `turn_end`. "
    "An id past a finished turn's last event is 416 `last_event_id_out_of_range` (except "
    "for a turn rebuilt from storage, which any reader gets anew with `reset: true`); while "
    "the turn runs, the stream waits for the events after it."
)


def event_stream(turn_id: str, after: int, started: bool = False) -> Response:
    """Stream the events after `after`, then follow live until the turn ends.

    A finished turn with nothing after `after` answers 204: the SSE spec's way to tell an
    EventSource to stop reconnecting. When this worker drains (a deploy), the stream ends
    without turn_end and the client reconnects, with Last-Event-ID, to another worker.
    `started`: the caller just started the turn, from event 0, so no 204 can apply and
    nothing need be read before answering.
    """
    turns = get_turns()
    if not started:
        if after:
            _check_in_range(turn_id, after)
        first = turns.peek(turn_id, after)
        if first.finished and (not first.frames or first.last_seq <= after):
            return Response(status=204, headers=SSE_HEADERS)
    guard = get_token_guard(g.get("token_id"))
    body = turns.follow(turn_id, after, Frames(), guard, access.streamed())
    return stream_response(body, SSE_HEADERS)


def stream_response(body: BodyFactory, headers: dict[str, str]) -> Response:
    """A text/event-stream response: the host streams it from its loop, else the engine's."""
    hook = request.environ.get(STREAM_HOOK)
    iterable = hook(body) if hook is not None else get_engine().runtime.iterate(body)
    return Response(
        iterable, mimetype="text/event-stream", headers=headers, direct_passthrough=True
    )


def _check_in_range(turn_id: str, after: int) -> None:
    """Refuse an id past a finished turn's last event: no client can have seen it.

    While the turn runs, what this worker knows is only a lower bound: another worker may
    have served a frame Redis stored before its writer heard so (an outage cut the reply),
    so the stream waits for the events after `after` instead.
    """
    written = get_turns().peek(turn_id, 0)
    if not written.finished:
        return
    first = decode_stream(written.frames.split(b"\n\n", 1)[0] + b"\n\n")
    if first and first[0][2].get("replayed"):
        return  # rebuilt from storage: any position gets it renumbered after it, with `reset`
    if after > written.last_seq:
        raise RangeNotSatisfiable(
            f"Last-Event-ID {after} is past the turn's last event ({written.last_seq}).",
            code="last_event_id_out_of_range",
            details={"last_event_id": after, "last_available": written.last_seq},
        )

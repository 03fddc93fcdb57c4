"""The one follow loop: a turn's events after a position, then live ones, in any shape.

Every event stream (our SSE protocol, the AI SDK's UI message stream) is this generator:
it sends each batch of frames one upstream read produced as one part, a keep-alive comment
when the turn is quiet, and ends when the turn ends. When the worker drains it ends early,
as the shape says (streaming/shapes.py): our protocol cleanly, the UI stream broken.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from typing import Protocol

from config import Timings
from engine.events.log import Chunk
from engine.events.reader import EventReader
from streaming.shapes import Shape
from streaming.wire.protocol import KEEPALIVE
from telemetry.metrics import STREAM_SECONDS, STREAMS_ACTIVE


class Guard(Protocol):
    """Ends a stream early: what authorised it (its token) stopped working."""

    def open(self) -> None:
        """The stream starts."""

    def refusal(self) -> tuple[str, str] | None:
        """(code, message) once the stream must end, else None."""

    def close(self) -> None:
        """The stream ended."""


async def follow(
    reader: EventReader,
    timings: Timings,
    turn_id: str,
    after: int,
    shape: Shape,
    draining: Callable[[], bool],
    guard: Guard | None = None,
    on_end: Callable[[], None] | None = None,
) -> AsyncIterator[bytes]:
    """Yield the turn's events after `after` until it ends, rendered by `shape`.

    Once `guard` refuses (the client's token was revoked or expired) the stream ends with
    the shape's error instead of more events. `on_end` runs when the stream is over.
    """
    # One generator from the host's write to the log's read: every layer between them
    # would be resumed again for every part.
    opened = time.monotonic()
    STREAMS_ACTIVE.inc()
    if guard is not None:
        guard.open()
    try:
        position, now = after, opened
        idle_since = wrote_at = now
        while True:
            idle = now - idle_since >= timings.idle_check
            wait = min(timings.keepalive, timings.idle_check)
            chunk: Chunk = await reader.read(turn_id, position, wait, check_store=idle)
            refusal = guard.refusal() if guard is not None else None
            if refusal is not None:
                yield shape.refuse(*refusal)
                return
            now = time.monotonic()
            if chunk.frames:
                position, idle_since = chunk.last_seq, now
                body = shape.render(chunk.frames)
                if body:
                    yield body
                    wrote_at = now
            elif not chunk.finished and now - wrote_at >= timings.keepalive:
                yield KEEPALIVE
                wrote_at = now
            # A finished chunk with nothing more to give ends the stream.
            if shape.done or (chunk.finished and (position >= chunk.last_seq or not chunk.frames)):
                tail = shape.close()
                break
            if draining():
                tail = shape.on_drain(turn_id)
                break
        if tail:
            yield tail
    finally:
        STREAMS_ACTIVE.dec()
        STREAM_SECONDS.observe(time.monotonic() - opened)
        if guard is not None:
            guard.close()
        if on_end is not None:
            on_end()

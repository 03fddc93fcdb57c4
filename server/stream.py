"""Stream a turn's events to one client from the event loop, as the SSE routes promise.

A reader costs a task, not a thread: it waits for its turn's log in the loop, sends every
frame produced by one upstream read in one write, and ends when the turn ends, when the
worker drains (the client reconnects elsewhere with Last-Event-ID), when the client goes,
or when the client stops reading (it is dropped rather than buffered without bound).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from engine.turns.service import TurnService
from server.shapes import Frames, UIChunks
from streaming.protocol import KEEPALIVE
from telemetry.metrics import STREAM_SECONDS, STREAMS_ACTIVE

Send = Any
Receive = Any


async def stream_turn(
    turns: TurnService,
    turn_id: str,
    after: int,
    receive: Receive,
    send: Send,
    shape: Frames | UIChunks | None = None,
    refused: Callable[[], tuple[str, str] | None] | None = None,
) -> None:
    """Send the events after `after`, then follow live; the response's start is sent.

    `refused` says (code, message) once the client's token is revoked or expired: the
    stream then ends with the shape's error (an SSE `error` event) instead of more events.
    """
    shape = shape or Frames()
    gone = asyncio.ensure_future(_disconnected(receive))
    position, now = after, time.monotonic()
    idle_since = wrote_at = opened = now
    STREAMS_ACTIVE.inc()
    try:
        while not gone.done():
            timings = turns.timings
            idle = time.monotonic() - idle_since >= timings.idle_check
            wait = min(timings.keepalive, timings.idle_check)
            chunk = await turns.aread(turn_id, position, wait, check_store=idle)
            refusal = refused() if refused is not None else None
            if refusal is not None:
                await send({"type": "http.response.body", "body": shape.refuse(*refusal)})
                return
            now = time.monotonic()
            if chunk.frames:
                position, idle_since = chunk.last_seq, now
                body = shape.render(chunk.frames)
                if body:
                    await _send(send, body, timings.keepalive)
                    wrote_at = now
            elif not chunk.finished and now - wrote_at >= timings.keepalive:
                await _send(send, KEEPALIVE, timings.keepalive)
                wrote_at = now
            # A finished chunk with nothing more to give ends the stream.
            if shape.done or (chunk.finished and (position >= chunk.last_seq or not chunk.frames)):
                break
            if turns.draining:
                if shape.break_on_drain:
                    return  # no final message: the server closes the connection unfinished
                break
        await send({"type": "http.response.body", "body": shape.close(), "more_body": False})
    finally:
        gone.cancel()
        STREAMS_ACTIVE.dec()
        STREAM_SECONDS.observe(time.monotonic() - opened)


# Readers whose send is waiting (the client's socket buffers are full), since when.
_waiting: dict[asyncio.Task[Any], float] = {}
_guards: dict[asyncio.AbstractEventLoop, asyncio.Task[None]] = {}


async def _send(send: Send, body: bytes, patience: float) -> None:
    task = asyncio.current_task()
    assert task is not None
    loop = asyncio.get_running_loop()
    if loop not in _guards:
        _guards[loop] = loop.create_task(_drop_stuck_readers(patience * 2))
    _waiting[task] = time.monotonic()
    try:
        await send({"type": "http.response.body", "body": body, "more_body": True})
    finally:
        del _waiting[task]


async def _drop_stuck_readers(patience: float) -> None:
    # One sweep a second for the whole loop: a client that reads nothing fills its socket's
    # buffers and its send waits; past `patience` it is dropped (it can resume with
    # Last-Event-ID), so a slow reader never holds memory without bound.
    while True:
        await asyncio.sleep(1.0)
        limit = time.monotonic() - patience
        for task, since in list(_waiting.items()):
            if since < limit:
                task.cancel()


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass

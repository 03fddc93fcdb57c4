"""The follow loop asks its shape how to end: a drain ends our frames cleanly, breaks UI chunks."""

from __future__ import annotations

import asyncio

import pytest

from config import Timings
from engine.events.follow import follow
from engine.events.log import Chunk
from streaming.hosting import StreamBroken
from streaming.shapes import Frames, Shape, UIChunks
from streaming.wire import events as E
from streaming.wire.protocol import encode_event

FIRST = encode_event(1, *E.turn_start("turn_1", "ses_1", "msg_q"))


class Running:
    """A reader of a turn that keeps running: its first event, then nothing new."""

    async def read(self, turn_id: str, after: int, wait: float, check_store: bool) -> Chunk:
        return Chunk(FIRST if after == 0 else b"", 1, False)


def drained(shape: Shape) -> list[bytes]:
    """What `follow` sends before it stops, the worker draining from the start."""

    async def run() -> list[bytes]:
        stream = follow(Running(), Timings(), "turn_1", 0, shape, lambda: True)  # type: ignore[arg-type]
        return [part async for part in stream]

    return asyncio.run(run())


def test_a_drain_ends_our_protocol_cleanly_after_what_was_sent() -> None:
    assert drained(Frames()) == [FIRST]


def test_a_drain_breaks_the_ui_stream_so_use_chat_resumes_elsewhere() -> None:
    with pytest.raises(StreamBroken):
        drained(UIChunks(None))


def test_each_shape_says_how_it_refuses() -> None:
    assert Frames().refuse("token_revoked", "x").startswith(b"event: error\ndata: ")
    refused = UIChunks(None).refuse("token_revoked", "x")
    assert refused == b'data: {"type":"error","errorText":"token_revoked: x"}\n\ndata: [DONE]\n\n'

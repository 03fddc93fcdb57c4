"""How a turn's events are written to one client: our SSE frames as they are, or UI chunks.

A shape owns every choice of rendering, so the follow loop (engine/events/follow.py) only
asks it: what to send for these frames, at the end, on a drain, on a refusal, and whether
its client's message is complete.
"""

from __future__ import annotations

from typing import Protocol

import orjson

from streaming.aisdk import ui_chunks as C
from streaming.aisdk.ui_stream import DONE, UIStreamTranslator, encode_chunks
from streaming.hosting import StreamBroken
from streaming.wire.protocol import decode_stream, error_body


class Shape(Protocol):
    """One way a turn's events are written."""

    @property
    def done(self) -> bool:
        """True once the client's message is complete before the turn's events end."""

    def render(self, frames: bytes) -> bytes:
        """The bytes to send for these frames."""

    def close(self) -> bytes:
        """The bytes that end the response once the turn's events ended."""

    def on_drain(self, turn_id: str) -> bytes:
        """The bytes that end the response when the worker drains, or raise StreamBroken."""

    def refuse(self, code: str, message: str) -> bytes:
        """The last bytes of a stream whose token stopped working."""


class Frames:
    """Our own protocol: frames go out byte for byte; a drained worker ends the response."""

    done = False

    def render(self, frames: bytes) -> bytes:
        """The bytes to send for these frames."""
        return frames

    def close(self) -> bytes:
        """The bytes that end the response."""
        return b""

    def on_drain(self, turn_id: str) -> bytes:
        """End cleanly: the client reconnects with Last-Event-ID to another worker."""
        return b""

    def refuse(self, code: str, message: str) -> bytes:
        """The last bytes of a stream whose token stopped working: an `error` event, no id."""
        return b"event: error\ndata: %s\n\n" % orjson.dumps(error_body(code, message))


class UIChunks:
    """The AI SDK's UI message stream, from the client's step on."""

    def __init__(
        self, steps: int | None, message_id: str | None = None, decided: bool = False
    ) -> None:
        self.translator = UIStreamTranslator(steps, message_id, decided)

    @property
    def done(self) -> bool:
        """True once the translator has ended the message."""
        return self.translator.done

    def render(self, frames: bytes) -> bytes:
        """Translate our frames into UI chunks."""
        out = []
        for _, kind, data in decode_stream(frames):
            out += self.translator.feed(kind, data)
        return encode_chunks(out) if out else b""

    def close(self) -> bytes:
        """Finish the message and the stream."""
        return encode_chunks(self.translator.close()) + DONE

    def on_drain(self, turn_id: str) -> bytes:
        """Break the connection: a clean end would look finished to useChat, a broken one
        makes it resume against another worker."""
        raise StreamBroken(turn_id)

    def refuse(self, code: str, message: str) -> bytes:
        """The last bytes of a stream whose token stopped working: an `error` chunk."""
        return encode_chunks([C.error(f"{code}: {message}")]) + DONE

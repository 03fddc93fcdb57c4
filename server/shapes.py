"""How a relayed stream is written: our SSE frames as they are, or AI SDK UI chunks."""

from __future__ import annotations

import json

from streaming.protocol import decode_stream
from streaming.ui_stream import DONE, UIStreamTranslator, encode_chunks


class Frames:
    """Our own protocol: frames go out byte for byte; a drained worker ends the response."""

    break_on_drain = False
    done = False

    def render(self, frames: bytes) -> bytes:
        """The bytes to send for these frames."""
        return frames

    def close(self) -> bytes:
        """The bytes that end the response."""
        return b""

    def refuse(self, code: str, message: str) -> bytes:
        """The last bytes of a stream whose token stopped working: an `error` event, no id."""
        body = json.dumps({"error": {"code": code, "message": message, "details": {}}})
        return f"event: error\ndata: {body}\n\n".encode()


class UIChunks:
    """The AI SDK's UI message stream, from the client's step on.

    A drained worker breaks the connection instead of ending it: a clean end would look
    finished to useChat, a broken one makes it resume against another worker.
    """

    break_on_drain = True

    def __init__(self, steps: int | None) -> None:
        self.translator = UIStreamTranslator(steps)

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

    def refuse(self, code: str, message: str) -> bytes:
        """The last bytes of a stream whose token stopped working: an `error` chunk."""
        return encode_chunks([{"type": "error", "errorText": f"{code}: {message}"}]) + DONE


def shape_of(spec: list[str]) -> Frames | UIChunks:
    """The shape a relay marker names: nothing (our frames) or `ui <steps|->`."""
    if spec and spec[0] == "ui":
        return UIChunks(None if spec[1] == "-" else int(spec[1]))
    return Frames()

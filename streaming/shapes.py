"""How a turn's events are written to one client: our SSE frames as they are, or UI chunks."""

from __future__ import annotations

import orjson

from streaming.protocol import decode_stream, error_body
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
        return b"event: error\ndata: %s\n\n" % orjson.dumps(error_body(code, message))


class UIChunks:
    """The AI SDK's UI message stream, from the client's step on.

    A drained worker breaks the connection instead of ending it: a clean end would look
    finished to useChat, a broken one makes it resume against another worker.
    """

    break_on_drain = True

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

    def refuse(self, code: str, message: str) -> bytes:
        """The last bytes of a stream whose token stopped working: an `error` chunk."""
        return encode_chunks([{"type": "error", "errorText": f"{code}: {message}"}]) + DONE


# Either way a turn's events can be written.
Shape = Frames | UIChunks

"""An httpx2 transport that serves the demo model to the real `anthropic` client."""

from __future__ import annotations

import hashlib
import json
import random
import time
from collections.abc import Iterator

import httpx2

from demo_model.brain import respond
from demo_model.wire import encode_reply


class _Body(httpx2.SyncByteStream):
    def __init__(self, chunks: Iterator[bytes], delay: float) -> None:
        self._chunks, self._delay = chunks, delay

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._chunks:
            if self._delay:
                time.sleep(self._delay)
            yield chunk


class DemoTransport(httpx2.BaseTransport):
    """Answers POST /v1/messages with a streamed reply in the real SSE wire format."""

    def __init__(self, event_delay: float = 0.0) -> None:
        self.event_delay = event_delay

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        """Serve one API request."""
        if request.method != "POST" or not request.url.path.endswith("/v1/messages"):
            return _error(404, "not_found_error", f"The demo model has no {request.url.path}.")
        try:
            body = json.loads(request.read())
        except ValueError:
            return _error(400, "invalid_request_error", "The request body is not JSON.")
        reply = respond(body)
        seed = hashlib.sha256(request.content).digest()
        message_id = "msg_demo_" + seed.hex()[:20]
        chunks = encode_reply(
            message_id,
            body.get("model", "demo"),
            reply.blocks,
            reply.stop_reason,
            max(1, len(request.content) // 4),
            random.Random(seed),
        )
        if not body.get("stream"):
            return _error(400, "invalid_request_error", "The demo model only streams.")
        return httpx2.Response(
            200,
            headers={"content-type": "text/event-stream", "request-id": "req_demo"},
            stream=_Body(chunks, self.event_delay),
        )


def _error(status: int, kind: str, message: str) -> httpx2.Response:
    body = {"type": "error", "error": {"type": kind, "message": message}}
    return httpx2.Response(status, json=body)

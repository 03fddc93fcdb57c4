"""An httpx2 transport that serves the demo model to the real `anthropic` async client."""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx2

from demo_model.binding import Refused, betas_of, check, sign_reply
from demo_model.brain import respond
from demo_model.context_management import manage, tokens_of
from demo_model.wire import encode_reply

# What the `anthropic` client is given for the demo: no key is checked, no host is reached.
DEMO_KEY = "offline-demo"
DEMO_URL = "http://offline-demo.invalid"


class Pace:
    """Seconds between streamed events (demos and tests slow the model down with it)."""

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay


def demo_http(pace: Pace, timeout: httpx2.Timeout) -> httpx2.AsyncClient:
    """An HTTP client whose every request the demo model answers, at `pace`."""
    return httpx2.AsyncClient(transport=DemoTransport(pace), timeout=timeout)


class _Body(httpx2.AsyncByteStream):
    def __init__(self, chunks: Iterator[bytes], pace: Pace) -> None:
        self._chunks, self._pace = chunks, pace

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self._chunks:
            if self._pace.delay:
                await asyncio.sleep(self._pace.delay)
            yield chunk


class DemoTransport(httpx2.AsyncBaseTransport):
    """Answers POST /v1/messages with a streamed reply in the real SSE wire format."""

    def __init__(self, pace: Pace | float = 0.0) -> None:
        self.pace = pace if isinstance(pace, Pace) else Pace(pace)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        """Serve one API request."""
        betas = betas_of(request.headers)
        found = _reply(request.method, request.url.path, await request.aread(), betas)
        if isinstance(found, httpx2.Response):
            return found
        return _stream(_Body(found, self.pace))


def _reply(
    method: str, path: str, content: bytes, betas: set[str] | None = None
) -> Iterator[bytes] | httpx2.Response:
    """The reply's SSE chunks, or an error response.

    Thinking blocks sent back are checked against what preceded them (demo_model/binding.py):
    a changed prefix gets the API's 400, or with `drop_block` is dropped and reported.
    """
    counting = path.endswith("/v1/messages/count_tokens")
    if method != "POST" or not (counting or path.endswith("/v1/messages")):
        return _error(404, "not_found_error", f"The demo model has no {path}.")
    try:
        body = json.loads(content)
    except ValueError:
        return _error(400, "invalid_request_error", "The request body is not JSON.")
    if counting:
        return _count(body)
    if not body.get("stream"):
        return _error(400, "invalid_request_error", "The demo model only streams.")
    try:
        checked = check(body, betas or set())
    except Refused as refused:
        return _error(refused.status, refused.kind, refused.message)
    managed = manage({**body, "messages": checked.messages})
    reply = respond({**body, "messages": managed.messages})
    blocks = [managed.compaction, *reply.blocks] if managed.compaction else reply.blocks
    # Signed over the request as it was sent: the next one sends the same history again.
    blocks = sign_reply(body, blocks)
    transformations = checked.transformations if checked.reported else None
    usage = None
    if managed.iterations:
        written = tokens_of(reply.blocks)
        managed.iterations[-1]["output_tokens"] = written
        usage = {"output_tokens": written, "iterations": managed.iterations}
    edits = {"applied_edits": managed.applied_edits} if managed.applied_edits else None
    seed = hashlib.sha256(content).digest()
    return encode_reply(
        "msg_demo_" + seed.hex()[:20],
        body.get("model", "demo"),
        blocks,
        reply.stop_reason,
        managed.input_tokens,
        random.Random(seed),
        usage=usage,
        context_management=edits,
        input_transformations=transformations,
    )


def _count(body: dict[str, Any]) -> httpx2.Response:
    """Answer count_tokens: the request's tokens before and after context management."""
    managed = manage(body)
    answer: dict[str, Any] = {"input_tokens": managed.input_tokens}
    if body.get("context_management"):
        original = managed.iterations[0]["input_tokens"] if managed.iterations else None
        answer["context_management"] = {"original_input_tokens": original or tokens_of(body)}
    return httpx2.Response(200, json=answer)


def _stream(body: httpx2.AsyncByteStream) -> httpx2.Response:
    return httpx2.Response(
        200, headers={"content-type": "text/event-stream", "request-id": "req_demo"}, stream=body
    )


def _error(status: int, kind: str, message: str) -> httpx2.Response:
    body = {"type": "error", "error": {"type": kind, "message": message}}
    return httpx2.Response(status, json=body)

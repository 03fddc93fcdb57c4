"""The ASGI front: every route is Flask's (run in a thread pool); every stream is the loop's.

An SSE route (routes/sse.py) does its checks in Flask as usual (auth, 404, 204, the turn
to start) and, seeing it runs behind this front, answers with a marker instead of a body:
the front then streams the turn from the event loop (server/stream.py), so a long-lived
stream holds a task, never a thread. Request bodies are read here first, bounded in size
and in time, so a client that announces a body and never sends it holds no thread either.
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import threading
import time
from functools import partial
from typing import Any

from flask import Flask

from server.shapes import shape_of
from server.stream import stream_turn
from server.wsgi import ThreadedWSGI
from telemetry import access

RELAY_HEADER = b"x-relay-turn"
# The access log's status for a client that left before any response (nginx's convention).
CLIENT_GONE = 499
# Collections stop every stream while they run. With the default thresholds (700, 10, 10) a
# worker with 500 streams ran about 7 young collections a second and a full one every 20 s
# that took 110-130 ms; almost nothing they freed was cyclic. These thresholds made the
# collector's total time a sixth and the worst added latency about half (README, Performance).
GC_THRESHOLDS = (5000, 20, 100)
log = logging.getLogger(__name__)
Scope = dict[str, Any]
Receive = Any
Send = Any


class Front:
    """The ASGI application of the chat backend."""

    def __init__(self, flask_app: Flask) -> None:
        self.flask = flask_app
        self.turns = flask_app.extensions["turns"]
        self.tokens = flask_app.extensions["token_watcher"]
        threads = int(flask_app.config.get("WSGI_THREADS", 64))
        self.wsgi = ThreadedWSGI(flask_app, workers=threads)
        self.max_body = int(flask_app.config["MAX_CONTENT_LENGTH"])
        self.body_timeout = float(flask_app.config.get("BODY_TIMEOUT", 10.0))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            await self._http(scope, receive, send)

    def begin_drain(self) -> None:
        """The server is stopping (SIGTERM): let streams end and turns finish or move."""
        threading.Thread(target=self.turns.drain, name="drain", daemon=True).start()

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        loop = asyncio.get_running_loop()
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                self.turns.attach_loop(loop)
                await loop.run_in_executor(None, self.turns.start_background)
                # What is loaded by now (modules, the app, the engine) lives as long as the
                # worker: the collector's full passes need not scan it again and again.
                gc.freeze()
                gc.set_threshold(*GC_THRESHOLDS)
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await loop.run_in_executor(None, self.turns.drain)
                await self.turns.deps.model.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        started, inner = time.perf_counter(), {**scope, "relay": True}
        relay: dict[str, Any] = {}
        status = [CLIENT_GONE]

        async def answer(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        try:
            body = await self._body(scope, receive, answer)
            if body is not None:
                try:
                    await self.wsgi(inner, body, _capture(relay, answer))
                except Exception:
                    log.exception("the WSGI app failed outside Flask's error handlers")
                    if status[0] != CLIENT_GONE or relay:
                        raise  # a response has begun: the connection is cut instead
                    await _error(answer, 500, "internal_error", "Something went wrong on our side.")
            if relay:
                status[0] = relay["start"]["status"]
            route = inner.get("access", {}).get("route")
            access.observe(scope["method"], route, status[0], time.perf_counter() - started)
            if relay:
                # The stream writes with `send` itself: no wrapper per event on the hot path.
                await send(relay["start"])
                await self._stream(relay, inner.get("token_id"), receive, send)
        finally:
            self._log(scope, inner, relay, status[0], time.perf_counter() - started)

    @staticmethod
    def _log(
        scope: Scope, inner: Scope, relay: dict[str, Any], status: int, seconds: float
    ) -> None:
        """Write the request's access line once its response is over (streams included)."""
        record = inner.get("access") or {}
        turn_id = record.get("turn_id") or relay.get("turn")
        path = record.get("route") or scope["path"]
        user_id = record.get("user_id") or inner.get("user_id")
        access.write(scope["method"], path, status, seconds, user_id, turn_id, bool(relay))

    async def _stream(
        self, relay: dict[str, Any], token_id: int | None, receive: Receive, send: Send
    ) -> None:
        """Serve a relayed stream, ending it soon after its token is revoked or expires."""
        turn_id, after, shape = relay["turn"], int(relay["after"]), relay["shape"]
        if token_id is None:
            await stream_turn(self.turns, turn_id, after, receive, send, shape)
            return
        self.tokens.open(token_id)
        try:
            refused = partial(self.tokens.dead, token_id)
            await stream_turn(self.turns, turn_id, after, receive, send, shape, refused)
        finally:
            self.tokens.close(token_id)

    async def _body(self, scope: Scope, receive: Receive, send: Send) -> bytes | None:
        """The whole request body, or None once a 408/413 error was sent."""
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_body:
            await _error(send, 413, "request_too_large", self._too_large())
            return None
        parts, size = [], 0
        try:
            async with asyncio.timeout(self.body_timeout):
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        return None
                    part = message.get("body", b"")
                    size += len(part)
                    if size > self.max_body:
                        await _error(send, 413, "request_too_large", self._too_large())
                        return None
                    parts.append(part)
                    if not message.get("more_body"):
                        return b"".join(parts)
        except TimeoutError:
            await _error(
                send,
                408,
                "request_timeout",
                f"The request body did not arrive within {self.body_timeout:g} seconds.",
            )
            return None

    def _too_large(self) -> str:
        return f"The request body is over the limit of {self.max_body} bytes."


def _capture(relay: dict[str, Any], send: Send) -> Send:
    """A send for the Flask app that keeps a relay marker's response instead of sending it."""

    async def capture(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            headers = message["headers"]
            marker = [v for k, v in headers if k == RELAY_HEADER]
            if marker:
                turn_id, after, *spec = marker[0].decode().split()
                kept = [(k, v) for k, v in headers if k not in (RELAY_HEADER, b"content-length")]
                relay.update(start={**message, "headers": kept}, turn=turn_id, after=after)
                relay["shape"] = shape_of(spec)
                return
        elif relay:
            return  # the marker's empty body
        await send(message)

    return capture


async def _error(send: Send, status: int, code: str, message: str) -> None:
    """Answer with the one JSON error shape."""
    body = json.dumps({"error": {"code": code, "message": message, "details": {}}}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})

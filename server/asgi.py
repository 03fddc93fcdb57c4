"""The ASGI front: every route is Flask's (run in a thread pool); every stream is the loop's.

An SSE route (routes/sse.py) does its checks in Flask as usual (auth, 404, 204, the turn
to start) and, seeing it runs behind this front, answers with a marker instead of a body:
the front then streams the turn from the event loop (server/stream.py), so a long-lived
stream holds a task, never a thread. Request bodies are read here first, bounded in size
and in time, so a client that announces a body and never sends it holds no thread either.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from typing import Any

from a2wsgi import WSGIMiddleware
from flask import Flask

from server.shapes import shape_of
from server.stream import stream_turn

RELAY_HEADER = b"x-relay-turn"
log = logging.getLogger(__name__)
Scope = dict[str, Any]
Receive = Any
Send = Any


class Front:
    """The ASGI application of the chat backend."""

    def __init__(self, flask_app: Flask) -> None:
        self.flask = flask_app
        self.turns = flask_app.extensions["turns"]
        threads = int(flask_app.config.get("WSGI_THREADS", 64))
        self.wsgi = WSGIMiddleware(flask_app, workers=threads)  # type: ignore[arg-type]
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
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await loop.run_in_executor(None, self.turns.drain)
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await self._body(scope, receive, send)
        if body is None:
            return
        relay: dict[str, Any] = {}

        async def capture(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = message["headers"]
                marker = [v for k, v in headers if k == RELAY_HEADER]
                if marker:
                    turn_id, after, *spec = marker[0].decode().split()
                    kept = [
                        (k, v) for k, v in headers if k not in (RELAY_HEADER, b"content-length")
                    ]
                    relay.update(start={**message, "headers": kept}, turn=turn_id, after=after)
                    relay["shape"] = shape_of(spec)
                    return
            elif relay:
                return  # the marker's empty body
            await send(message)

        started = False

        async def tracked(message: dict[str, Any]) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await capture(message)

        try:
            await self.wsgi({**scope, "relay": True}, _replay(body, receive), tracked)
        except Exception:
            log.exception("the WSGI app failed outside Flask's error handlers")
            if started:
                raise
            await _error(send, 500, "internal_error", "Something went wrong on our side.")
            return
        if relay:
            await send(relay["start"])
            await stream_turn(
                self.turns, relay["turn"], int(relay["after"]), receive, send, relay["shape"]
            )

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


def _replay(body: bytes, receive: Receive) -> Receive:
    """A receive that gives the body read already, then waits for the client to go."""
    sent = False

    async def replay() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


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

"""Our host serving an app on a loopback port in a thread: the app with its engine, or a toy."""

from __future__ import annotations

import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

import httpx2

from app import host
from config import Timings
from routes.error_handler import render_host_error
from server.serve import RunningServer, ServerSettings, serve_in_thread
from streaming.hosting import Hosted, WSGIApp, plain_error
from streaming.wire.protocol import decode_stream
from tests.rawhttp import Client, Reply
from tests.waits import PATIENCE

# Every timing shrunk together (a header deadline of 0.5 s, a slow reader dropped after 1.5 s).
FAST = Timings().scaled(0.05)


def start(app: Hosted | WSGIApp, settings: ServerSettings) -> tuple[socket.socket, RunningServer]:
    """Serve `app` on a free loopback port; return the listening socket and the server."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    running = serve_in_thread(app, sock, settings)
    # A hosted app starts its background (the engine) first: give it time on a loaded machine.
    assert running.started.wait(2 * PATIENCE), "the server did not start"
    assert running.error is None, running.error
    return sock, running


@dataclass
class Live:
    """A server running a toy app on a loopback port, spoken to over raw connections."""

    port: int
    running: RunningServer

    def connect(self) -> Client:
        """A new raw connection."""
        return Client(self.port)

    def get(self, path: str = "/", **headers: str) -> Reply:
        """One GET on a new connection."""
        client = self.connect()
        try:
            client.request("GET", path, **headers)
            return client.reply()
        finally:
            client.close()


def worded(app: Hosted | WSGIApp) -> Hosted:
    """`app`, whose host words its own answers as the chat app does (the one JSON shape)."""
    hosted = app if isinstance(app, Hosted) else Hosted(app)
    if hosted.render_error is plain_error:
        hosted = replace(hosted, render_error=render_host_error)
    return hosted


@contextmanager
def serving(app: Hosted | WSGIApp, settings: ServerSettings | None = None) -> Iterator[Live]:
    """Serve `app` (FAST timings, 4 threads unless told) for the test's duration; the host's
    own answers are worded as the chat app words them."""
    sock, running = start(worded(app), settings or ServerSettings(timings=FAST, threads=4))
    try:
        yield Live(sock.getsockname()[1], running)
    finally:
        running.close(graceful=False)
        sock.close()


class LiveServer:
    """The app as workers run it (our server on uvloop, the engine in its loop) on 127.0.0.1."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        settings = ServerSettings(
            timings=app.config["SETTINGS"].timings,
            max_body=app.config["MAX_CONTENT_LENGTH"],
            upload_max_body=app.config["SETTINGS"].import_max_bytes,
        )
        self.sock, self.server = start(host(app), settings)
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.headers = {"Authorization": f"Bearer {token}"}
        # As every client must, reuse an idle connection only well within the server's idle
        # deadline (HEADER_TIMEOUT, scaled here): one it just closed fails the next request.
        limits = httpx2.Limits(keepalive_expiry=settings.timings.header_timeout / 2)
        self.http = httpx2.Client(
            base_url=self.url, headers=self.headers, timeout=30, limits=limits
        )
        self.unavailable, self._count_lock = 0, threading.Lock()

    def post(self, path: str, **kw: Any) -> httpx2.Response:
        return self.http.post(path, **kw)

    def get(self, path: str, **kw: Any) -> httpx2.Response:
        return self.http.get(path, **kw)

    def start_turn(
        self, question: str, session_id: str | None = None, patient: bool = False
    ) -> dict[str, Any]:
        """Create a session if needed and start a turn; return the 202 body.

        `patient`: answer a 503 as a client does, sending the same request again (with its
        `client_id`, so a start that went through is not started twice) after a pause; each
        such 503 is counted in `self.unavailable`.
        """
        body = {"message": question, "client_id": uuid.uuid4().hex}
        sid = (
            session_id or self._patiently(lambda: self.post("/api/sessions"), patient).json()["id"]
        )
        response = self._patiently(
            lambda: self.post(f"/api/sessions/{sid}/turns", json=body), patient
        )
        assert response.status_code == 202, response.text
        return response.json()

    def _patiently(self, call: Any, patient: bool) -> httpx2.Response:
        for _ in range(40 if patient else 1):
            response = call()
            if response.status_code != 503 or not patient:
                return response
            with self._count_lock:
                self.unavailable += 1
            time.sleep(min(float(response.headers.get("retry-after") or 1), 0.5))
        return response

    def read_events(
        self,
        path: str,
        last_event_id: int | None = None,
        max_events: int | None = None,
        auth: bool = True,
        reading: threading.Event | None = None,
        patient: bool = False,
    ) -> bytes:
        """Read an SSE response; stop (dropping the connection) after `max_events` events.

        `reading` is set once the first bytes arrived. `patient`: a 503 (the database out of
        reach for now) reads as nothing after a client's pause, counted in `self.unavailable`.
        """
        headers = dict(self.headers) if auth else {}
        if last_event_id is not None:
            headers["Last-Event-ID"] = str(last_event_id)
        raw = b""
        with (
            httpx2.Client(base_url=self.url, timeout=30) as client,
            client.stream("GET", path, headers=headers) as response,
        ):
            if response.status_code == 204:  # a finished turn with nothing left to send
                return b""
            if response.status_code == 503 and patient:
                with self._count_lock:
                    self.unavailable += 1
                time.sleep(0.2)
                return b""
            assert response.status_code == 200, response.read()
            assert response.headers["content-type"].startswith("text/event-stream")
            for chunk in response.iter_raw():
                raw += chunk
                if reading is not None:
                    reading.set()
                if max_events is not None and _count(raw) >= max_events:
                    return _first_events(raw, max_events)
        return raw

    def close(self) -> None:
        self.http.close()
        self.server.close()
        self.sock.close()


def _count(raw: bytes) -> int:
    return sum(1 for frame in raw.split(b"\n\n") if frame.startswith(b"id: "))


def _first_events(raw: bytes, n: int) -> bytes:
    frames = [f for f in raw.split(b"\n\n") if f.startswith(b"id: ")][:n]
    return b"".join(f + b"\n\n" for f in frames)


def events_only(raw: bytes) -> bytes:
    """Drop keep-alive comments, keeping the event frames byte for byte."""
    return b"".join(f + b"\n\n" for f in raw.split(b"\n\n") if f.startswith(b"id: "))


def decode(raw: bytes) -> list[tuple[int, str, dict[str, Any]]]:
    """Decode our SSE bytes."""
    return decode_stream(raw)


def text_app(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
    """A toy app: echo the method, path, query and body."""
    body = environ["wsgi.input"].read()
    start_response("200 OK", [("Content-Type", "text/plain")])
    line = f"{environ['REQUEST_METHOD']} {environ['PATH_INFO']}?{environ['QUERY_STRING']} "
    return [line.encode("latin-1"), body]

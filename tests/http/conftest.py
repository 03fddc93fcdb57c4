"""A real server on a loopback port, and a small SSE client over real sockets."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
import uvicorn

from server.asgi import Front
from server.protocol import JSONHttpToolsProtocol
from server.worker import FrontServer
from streaming.protocol import decode_stream


class LiveServer:
    """The app as workers run it (the ASGI front on uvicorn and uvloop) on 127.0.0.1."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(
            Front(app),
            loop="uvloop",
            http=JSONHttpToolsProtocol,
            lifespan="on",
            log_level="warning",
        )
        self.server = FrontServer(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [sock]}, daemon=True
        )
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.01)
        self.headers = {"Authorization": f"Bearer {token}"}
        self.http = httpx2.Client(base_url=self.url, headers=self.headers, timeout=30)

    def post(self, path: str, **kw: Any) -> httpx2.Response:
        return self.http.post(path, **kw)

    def get(self, path: str, **kw: Any) -> httpx2.Response:
        return self.http.get(path, **kw)

    def start_turn(self, question: str, session_id: str | None = None) -> dict[str, Any]:
        """Create a session if needed and start a turn; return the 202 body."""
        sid = session_id or self.post("/api/sessions").json()["id"]
        response = self.post(f"/api/sessions/{sid}/turns", json={"message": question})
        assert response.status_code == 202, response.text
        return response.json()

    def read_events(
        self,
        path: str,
        last_event_id: int | None = None,
        max_events: int | None = None,
        auth: bool = True,
    ) -> bytes:
        """Read an SSE response; stop (dropping the connection) after `max_events` events."""
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
            assert response.status_code == 200, response.read()
            assert response.headers["content-type"].startswith("text/event-stream")
            for chunk in response.iter_raw():
                raw += chunk
                if max_events is not None and _count(raw) >= max_events:
                    return _first_events(raw, max_events)
        return raw

    def close(self) -> None:
        self.http.close()
        self.server.should_exit = True
        self.thread.join(30)


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


@pytest.fixture
def live(app: Any, user: tuple[int, str]) -> Iterator[LiveServer]:
    """The app on a loopback port, with alice's token."""
    server = LiveServer(app, user[1])
    yield server
    server.close()

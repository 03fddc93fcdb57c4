"""A real server on a loopback port, and a small SSE client over real sockets."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from app import host
from server.serve import ServerSettings, serve_in_thread
from streaming.protocol import decode_stream


class LiveServer:
    """The app as workers run it (our server on uvloop, the engine in its loop) on 127.0.0.1."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen(128)
        self.port = sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        settings = ServerSettings(
            timings=app.config["SETTINGS"].timings, max_body=app.config["MAX_CONTENT_LENGTH"]
        )
        self.server = serve_in_thread(host(app), sock, settings)
        assert self.server.started.wait(20), "the server did not start"
        assert self.server.error is None, self.server.error
        self.headers = {"Authorization": f"Bearer {token}"}
        # As every client must, reuse an idle connection only well within the server's idle
        # deadline (HEADER_TIMEOUT, scaled here): one it just closed fails the next request.
        limits = httpx2.Limits(keepalive_expiry=settings.timings.header_timeout / 2)
        self.http = httpx2.Client(
            base_url=self.url, headers=self.headers, timeout=30, limits=limits
        )

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
        self.server.close()


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

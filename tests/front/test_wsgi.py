"""The WSGI bridge: the whole app runs in a thread, its response arrives in two messages."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from server.wsgi import ThreadedWSGI

SCOPE = {
    "type": "http",
    "http_version": "1.1",
    "method": "POST",
    "path": "/echo",
    "root_path": "",
    "query_string": b"x=1",
    "headers": [(b"content-type", b"text/plain"), (b"x-extra", b"a")],
    "server": ("127.0.0.1", 80),
    "client": ("127.0.0.1", 5555),
}


def run(bridge: ThreadedWSGI, body: bytes = b"") -> list[dict[str, Any]]:
    """The messages the bridge sends for one request."""
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(bridge(dict(SCOPE), body, send))
    return sent


def test_the_app_reads_the_body_and_its_response_is_sent_whole() -> None:
    seen: dict[str, Any] = {}

    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        seen["thread"] = threading.current_thread().name
        seen["scope"] = environ["asgi.scope"]
        body = environ["wsgi.input"].read()
        start_response("201 Created", [("Content-Type", "text/plain"), ("X-Query", "1")])
        return [b"got ", body, b" via ", environ["HTTP_X_EXTRA"].encode()]

    sent = run(ThreadedWSGI(app, workers=2), b"hello")
    assert sent == [
        {
            "type": "http.response.start",
            "status": 201,
            "headers": [(b"content-type", b"text/plain"), (b"x-query", b"1")],
        },
        {"type": "http.response.body", "body": b"got hello via a"},
    ]
    assert seen["thread"].startswith("wsgi")
    assert seen["scope"]["path"] == "/echo"  # routes read the ASGI scope (relay, access)


def test_write_comes_first_and_the_iterable_is_closed() -> None:
    closed = []

    class Body:
        def __iter__(self):  # type: ignore[no-untyped-def]
            yield b"b"
            yield b"c"

        def close(self) -> None:
            closed.append(True)

    def app(environ: dict[str, Any], start_response: Any) -> Body:
        write = start_response("200 OK", [])
        write(b"a")
        return Body()

    assert run(ThreadedWSGI(app, workers=1))[1]["body"] == b"abc"
    assert closed == [True]


def test_a_later_start_response_replaces_the_first() -> None:
    # Nothing is sent before the app returns, so an error page may replace a response.
    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        start_response("200 OK", [("X-A", "1")])
        start_response("500 Internal Server Error", [("X-B", "2")], (None, None, None))
        return [b"oops"]

    start, body = run(ThreadedWSGI(app, workers=1))
    assert (start["status"], start["headers"], body["body"]) == (500, [(b"x-b", b"2")], b"oops")


def test_an_app_that_fails_sends_nothing_and_raises() -> None:
    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        start_response("200 OK", [])
        raise RuntimeError("boom")

    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    with pytest.raises(RuntimeError, match="boom"):
        asyncio.run(ThreadedWSGI(app, workers=1)(dict(SCOPE), b"", send))
    assert sent == []  # the front answers with its JSON 500 instead

"""Streamed bodies through STREAM_HOOK: part by part from the loop, closed on every ending."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

import flask
import pytest

from server.wsgi import StreamBody
from streaming.hosting import STREAM_HOOK, BodyFactory, StreamBroken
from tests.live import serving
from tests.rawhttp import Client
from tests.waits import PATIENCE


def streaming(factory: BodyFactory) -> Callable[..., Any]:
    """A WSGI app answering every request with `factory`'s stream."""

    def app(environ: dict[str, Any], start_response: Any) -> Any:
        body = environ[STREAM_HOOK](factory)
        start_response("200 OK", [("Content-Type", "text/event-stream")])
        return body

    return app


def test_parts_arrive_one_by_one_with_chunked_framing_then_the_last_chunk() -> None:
    gate = threading.Event()

    async def parts() -> AsyncIterator[bytes]:
        yield b"one"
        yield b""  # an empty part is no chunk (it would end the body)
        await asyncio.to_thread(gate.wait, PATIENCE)  # sent before the next part is made
        yield b"two"

    with serving(streaming(parts)) as live:
        client = live.connect()
        client.request("GET", "/s")
        head = client.head()
        assert head.headers["transfer-encoding"] == "chunked"
        assert "content-length" not in head.headers
        assert client.chunk() == b"one"
        gate.set()
        assert (client.chunk(), client.chunk()) == (b"two", None)
        client.request("GET", "/again")  # a finished stream keeps the connection alive
        assert client.reply().chunks == [b"one", b"two"]


def test_the_generator_is_closed_when_the_client_leaves() -> None:
    finished = threading.Event()

    async def endless() -> AsyncIterator[bytes]:
        try:
            yield b"one"
            await asyncio.Event().wait()
            yield b"never"
        finally:
            finished.set()

    with serving(streaming(endless)) as live:
        client = live.connect()
        client.request("GET", "/s")
        client.head()
        assert client.chunk() == b"one"
        client.close()
        assert finished.wait(PATIENCE)


@pytest.mark.parametrize("error", [StreamBroken("moved"), RuntimeError("bug")])
def test_an_iterator_that_raises_leaves_the_response_unfinished(error: Exception) -> None:
    async def breaking() -> AsyncIterator[bytes]:
        yield b"one"
        raise error

    with serving(streaming(breaking)) as live:
        client = live.connect()
        client.request("GET", "/s")
        reply = client.reply()
        assert reply.status == 200 and reply.chunks == [b"one"] and not reply.complete
        assert client.closed()


def test_a_stream_body_cannot_be_iterated_in_a_thread() -> None:
    async def parts() -> AsyncIterator[bytes]:
        yield b"one"

    with pytest.raises(TypeError):
        list(StreamBody(parts))

    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        start_response("200 OK", [])
        return list(environ[STREAM_HOOK](parts))

    with serving(app) as live:
        reply = live.get("/")
        assert reply.status == 500 and reply.error()["code"] == "internal_error"


def test_a_slow_reader_is_dropped_and_never_buffered_without_bound() -> None:
    made = []
    finished = threading.Event()

    async def flood() -> AsyncIterator[bytes]:
        try:
            while True:
                made.append(1)
                yield b"x" * 65536
        finally:
            finished.set()

    with serving(streaming(flood)) as live:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", live.port))
        sock.sendall(b"GET /flood HTTP/1.1\r\nHost: test\r\n\r\n")  # and read nothing
        assert finished.wait(PATIENCE)  # dropped after slow_reader, generator closed
        assert len(made) < 200  # the stream waited for the client instead of buffering
        sock.close()


def test_head_and_no_body_statuses_never_start_the_stream() -> None:
    started = []

    async def parts() -> AsyncIterator[bytes]:
        started.append(True)
        yield b"one"

    def app(environ: dict[str, Any], start_response: Any) -> Any:
        body = environ[STREAM_HOOK](parts)
        start_response("204 No Content" if environ["PATH_INFO"] == "/204" else "200 OK", [])
        return body

    with serving(app) as live:
        client = live.connect()
        client.request("HEAD", "/s")
        assert client.reply(head_only=True).status == 200
        client.request("GET", "/204")
        assert client.reply().status == 204
        client.request("GET", "/s")
        assert client.reply().chunks == [b"one"]
    assert started == [True]


def test_an_http_1_0_stream_is_raw_bytes_ended_by_the_close() -> None:
    async def parts() -> AsyncIterator[bytes]:
        yield b"one"
        yield b"two"

    with serving(streaming(parts)) as live:
        client = live.connect()
        client.send(b"GET /s HTTP/1.0\r\n\r\n")
        reply = client.reply()
        assert reply.headers["connection"] == "close" and "transfer-encoding" not in reply.headers
        assert reply.body == b"onetwo"


def test_a_flask_view_streams_through_the_hook() -> None:
    # Pins werkzeug: with direct_passthrough, the response's body is handed back as the WSGI
    # app_iter itself, so the host recognises its StreamBody.
    gate = threading.Event()
    app = flask.Flask(__name__)

    async def parts() -> AsyncIterator[bytes]:
        yield b"data: 1\n\n"
        await asyncio.to_thread(gate.wait, PATIENCE)
        yield b"data: 2\n\n"

    @app.get("/events")
    def events() -> flask.Response:
        body = flask.request.environ[STREAM_HOOK](parts)
        return flask.Response(body, direct_passthrough=True, mimetype="text/event-stream")

    with serving(app.wsgi_app) as live:
        client: Client = live.connect()
        client.request("GET", "/events")
        head = client.head()
        assert head.status == 200 and head.headers["content-type"].startswith("text/event-stream")
        assert client.chunk() == b"data: 1\n\n"
        gate.set()
        assert (client.chunk(), client.chunk()) == (b"data: 2\n\n", None)

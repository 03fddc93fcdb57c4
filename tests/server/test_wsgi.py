"""The WSGI bridge: the PEP 3333 environ, and the whole app call in a thread of a fixed pool."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from typing import Any

import pytest

from server.wsgi import Request, Response, StreamBody, WSGIPool, build_environ, call_app
from streaming.hosting import STREAM_HOOK

REQUEST = Request(
    method="POST",
    target=b"/a%20b/%C3%A9?x=1&y=%2F#frag",
    version="1.1",
    headers=[
        (b"Host", b"example.org:8080"),
        (b"Content-Type", b"text/plain"),
        (b"Content-Length", b"5"),
        (b"X-Many", b"a"),
        (b"x-many", b"b"),
        (b"Cookie", b"a=1"),
        (b"Cookie", b"b=2"),
        (b"X_Sneaky", b"dropped"),
    ],
    body=b"hello",
    client=("10.0.0.1", 5555),
    server=("127.0.0.1", 8000),
)


def test_the_environ_follows_pep_3333() -> None:
    environ = build_environ(REQUEST, multiprocess=True)
    assert environ["REQUEST_METHOD"] == "POST"
    assert environ["SCRIPT_NAME"] == ""
    assert environ["PATH_INFO"] == "/a b/Ã©"  # percent-decoded bytes, as latin-1
    assert environ["QUERY_STRING"] == "x=1&y=%2F"
    assert (environ["CONTENT_TYPE"], environ["CONTENT_LENGTH"]) == ("text/plain", "5")
    assert "HTTP_CONTENT_TYPE" not in environ and "HTTP_CONTENT_LENGTH" not in environ
    assert (environ["SERVER_NAME"], environ["SERVER_PORT"]) == ("127.0.0.1", "8000")
    assert environ["SERVER_PROTOCOL"] == "HTTP/1.1"
    assert (environ["REMOTE_ADDR"], environ["REMOTE_PORT"]) == ("10.0.0.1", "5555")
    assert environ["HTTP_HOST"] == "example.org:8080"
    assert environ["HTTP_X_MANY"] == "a, b"
    assert environ["HTTP_COOKIE"] == "a=1; b=2"
    assert "HTTP_X_SNEAKY" not in environ  # it would pose as X-Sneaky
    assert environ["wsgi.input"].read() == b"hello"
    assert environ["wsgi.version"] == (1, 0) and environ["wsgi.url_scheme"] == "http"
    assert environ["wsgi.multithread"] and environ["wsgi.multiprocess"]
    assert not environ["wsgi.run_once"] and environ["wsgi.input_terminated"]
    assert environ[STREAM_HOOK] is StreamBody


def test_a_chunked_body_gets_its_length_and_an_absolute_target_its_path() -> None:
    request = Request("PUT", b"http://example.org/p?q", "1.0", [], b"abc", None, None)
    environ = build_environ(request)
    assert (environ["PATH_INFO"], environ["QUERY_STRING"]) == ("/p", "q")
    assert environ["CONTENT_LENGTH"] == "3" and "REMOTE_ADDR" not in environ
    assert environ["SERVER_PROTOCOL"] == "HTTP/1.0"


def test_an_absolute_target_names_the_host_whatever_host_says() -> None:
    headers = [(b"Host", b"evil.example")]
    request = Request("GET", b"http://example.org:8080/p", "1.1", headers, b"", None, None)
    environ = build_environ(request)
    assert (environ["HTTP_HOST"], environ["PATH_INFO"]) == ("example.org:8080", "/p")


def test_write_comes_first_then_the_iterable_which_is_closed() -> None:
    closed = []

    class Body:
        def __iter__(self):  # type: ignore[no-untyped-def]
            yield b"b"
            yield b"c"

        def close(self) -> None:
            closed.append(True)

    def app(environ: dict[str, Any], start_response: Any) -> Body:
        write = start_response("201 Created", [("X-A", "1")])
        write(b"a")
        return Body()

    response = call_app(app, build_environ(REQUEST))
    assert response == Response(b"201 Created", [(b"X-A", b"1")], b"abc")
    assert closed == [True]


def test_a_later_start_response_replaces_the_first() -> None:
    # Nothing is sent before the app returns, so an error page may replace a response.
    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        start_response("200 OK", [("X-A", "1")])
        start_response("500 Internal Server Error", [("X-B", "2")], (None, None, None))
        return [b"oops"]

    response = call_app(app, build_environ(REQUEST))
    assert (response.status, response.headers) == (b"500 Internal Server Error", [(b"X-B", b"2")])


def test_a_stream_body_comes_back_untouched() -> None:
    async def parts() -> AsyncIterator[bytes]:
        yield b"x"

    def app(environ: dict[str, Any], start_response: Any) -> Any:
        start_response("200 OK", [])
        return environ[STREAM_HOOK](parts)

    response = call_app(app, build_environ(REQUEST))
    assert type(response.body) is StreamBody and response.body.factory is parts


@pytest.mark.parametrize(
    ("status", "headers"),
    [("200 OK", [("X-A", "1\r\nInjected: yes")]), ("OK", []), ("200 OK", [("X-A", "\u20ac")])],
)
def test_a_head_that_cannot_be_sent_is_an_error(status: str, headers: list[Any]) -> None:
    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        start_response(status, headers)
        return [b""]

    with pytest.raises(ValueError):
        call_app(app, build_environ(REQUEST))


def test_the_pool_runs_the_app_in_its_threads_and_hands_back_errors() -> None:
    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        if environ["PATH_INFO"] == "/boom":
            raise RuntimeError("boom")
        start_response("200 OK", [])
        return [threading.current_thread().name.encode()]

    pool = WSGIPool(app, threads=2)
    pool.start()

    async def run() -> None:
        response = await pool.submit(REQUEST)
        assert response.body in (b"http-1", b"http-2")
        with pytest.raises(RuntimeError, match="boom"):
            await pool.submit(Request("GET", b"/boom", "1.1", [], b"", None, None))

    try:
        asyncio.run(run())
    finally:
        pool.stop()
    for thread in pool.threads:
        thread.join(10)
        assert not thread.is_alive()

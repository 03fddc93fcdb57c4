"""Every request head the host refuses (RFC 9112), pinned: a parser upgrade that relaxes any
of them fails here. Each refusal is the one JSON error shape, closes the connection, and never
reaches the app; the forms RFC 9112 allows are still served."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from server.serve import ServerSettings
from tests.live import FAST, Live, serving, text_app

H = b"Host: a\r\n"
CHUNKED = b"Transfer-Encoding: chunked\r\n"

REFUSED: list[tuple[str, bytes, int, str]] = [
    # The request line: one space apart, HTTP/1.0 or HTTP/1.1, a target the host can serve.
    ("HTTP/0.9", b"GET /\r\n\r\n", 400, "bad_request"),
    ("HTTP/0.9, line only", b"GET /\r\n", 400, "bad_request"),
    ("HTTP/0.9 named", b"GET / HTTP/0.9\r\n" + H + b"\r\n", 400, "bad_request"),
    ("HTTP/1.2", b"GET / HTTP/1.2\r\n" + H + b"\r\n", 400, "bad_request"),
    ("HTTP/2.0 as text", b"GET / HTTP/2.0\r\n" + H + b"\r\n", 400, "bad_request"),
    ("HTTP/3.1", b"GET / HTTP/3.1\r\n" + H + b"\r\n", 400, "bad_request"),
    ("lower-case version", b"GET / http/1.1\r\n" + H + b"\r\n", 400, "bad_request"),
    ("two spaces before target", b"GET  / HTTP/1.1\r\n" + H + b"\r\n", 400, "bad_request"),
    ("two spaces after target", b"GET /  HTTP/1.1\r\n" + H + b"\r\n", 400, "bad_request"),
    ("space after version", b"GET / HTTP/1.1 \r\n" + H + b"\r\n", 400, "bad_request"),
    ("leading space", b" GET / HTTP/1.1\r\n" + H + b"\r\n", 400, "bad_request"),
    ("tab for space", b"GET\t/ HTTP/1.1\r\n" + H + b"\r\n", 400, "bad_request"),
    ("NUL in target", b"GET /\x00 HTTP/1.1\r\n" + H + b"\r\n", 400, "bad_request"),
    ("lower-case method", b"get / HTTP/1.1\r\n" + H + b"\r\n", 400, "bad_request"),
    ("unknown method", b"FOO / HTTP/1.1\r\n" + H + b"\r\n", 400, "bad_request"),
    ("asterisk without OPTIONS", b"GET * HTTP/1.1\r\n" + H + b"\r\n", 400, "bad_request"),
    ("relative target", b"GET api HTTP/1.1\r\n" + H + b"\r\n", 400, "bad_request"),
    ("no target", b"GET HTTP/1.1\r\n" + H + b"\r\n", 400, "bad_request"),
    ("no method", b"/ HTTP/1.1\r\n" + H + b"\r\n", 400, "bad_request"),
    ("tab before version", b"GET /\tHTTP/1.1\r\n" + H + b"\r\n", 400, "bad_request"),
    ("bare LF after the request line", b"GET / HTTP/1.1\n" + H + b"\r\n", 400, "bad_request"),
    ("HTTP/1.10", b"GET / HTTP/1.10\r\n" + H + b"\r\n", 400, "bad_request"),
    ("HTTP/11", b"GET / HTTP/11\r\n" + H + b"\r\n", 400, "bad_request"),
    ("HTTPS/1.1", b"GET / HTTPS/1.1\r\n" + H + b"\r\n", 400, "bad_request"),
    ("HTTP/2 preface", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 400, "bad_request"),
    ("space in target", b"GET /a b HTTP/1.1\r\n" + H + b"\r\n", 400, "bad_request"),
    ("control in target", b"GET /\x01 HTTP/1.1\r\n" + H + b"\r\n", 400, "bad_request"),
    ("DEL in target", b"GET /\x7f HTTP/1.1\r\n" + H + b"\r\n", 400, "bad_request"),
    ("obs-text in target", b"GET /\xff HTTP/1.1\r\n" + H + b"\r\n", 400, "bad_request"),
    ("absolute-form, bad scheme", b"GET 1http://a/ HTTP/1.1\r\n" + H + b"\r\n", 400, "bad_request"),
    # Host: exactly one on HTTP/1.1, at most one on HTTP/1.0, always a host[:port].
    ("no Host", b"GET / HTTP/1.1\r\n\r\n", 400, "bad_request"),
    ("two Hosts", b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, "bad_request"),
    ("two equal Hosts", b"GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", 400, "bad_request"),
    ("two Hosts, HTTP/1.0", b"GET / HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n", 400, "bad_request"),
    ("two Hosts, either case", b"GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n", 400, "bad_request"),
    ("Host list", b"GET / HTTP/1.1\r\nHost: a, b\r\n\r\n", 400, "bad_request"),
    ("unclosed IPv6 Host", b"GET / HTTP/1.1\r\nHost: [::1\r\n\r\n", 400, "bad_request"),
    ("empty Host", b"GET / HTTP/1.1\r\nHost: \r\n\r\n", 400, "bad_request"),
    ("Host with a space", b"GET / HTTP/1.1\r\nHost: a b\r\n\r\n", 400, "bad_request"),
    ("Host with a path", b"GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", 400, "bad_request"),
    ("Host with userinfo", b"GET / HTTP/1.1\r\nHost: u@a\r\n\r\n", 400, "bad_request"),
    ("Host with a bad port", b"GET / HTTP/1.1\r\nHost: a:http\r\n\r\n", 400, "bad_request"),
    ("Host with a long port", b"GET / HTTP/1.1\r\nHost: a:123456\r\n\r\n", 400, "bad_request"),
    # Smuggling: framing two parsers could read two ways.
    (
        "Content-Length and Transfer-Encoding",
        b"POST / HTTP/1.1\r\n" + H + b"Content-Length: 3\r\n" + CHUNKED + b"\r\n0\r\n\r\n",
        400,
        "bad_request",
    ),
    (
        "Transfer-Encoding and Content-Length",
        b"POST / HTTP/1.1\r\n" + H + CHUNKED + b"Content-Length: 3\r\n\r\n0\r\n\r\n",
        400,
        "bad_request",
    ),
    (
        "two Content-Lengths",
        b"POST / HTTP/1.1\r\n" + H + b"Content-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
        400,
        "bad_request",
    ),
    (
        "two equal Content-Lengths",
        b"POST / HTTP/1.1\r\n" + H + b"Content-Length: 3\r\nContent-Length: 3\r\n\r\nabc",
        400,
        "bad_request",
    ),
    (
        "Content-Length list",
        b"POST / HTTP/1.1\r\n" + H + b"Content-Length: 3, 3\r\n\r\nabc",
        400,
        "bad_request",
    ),
    (
        "non-numeric Content-Length",
        b"POST / HTTP/1.1\r\n" + H + b"Content-Length: abc\r\n\r\n",
        400,
        "bad_request",
    ),
    (
        "signed Content-Length",
        b"POST / HTTP/1.1\r\n" + H + b"Content-Length: +3\r\n\r\nabc",
        400,
        "bad_request",
    ),
    (
        "negative Content-Length",
        b"POST / HTTP/1.1\r\n" + H + b"Content-Length: -3\r\n\r\nabc",
        400,
        "bad_request",
    ),
    (
        "hex Content-Length",
        b"POST / HTTP/1.1\r\n" + H + b"Content-Length: 0x3\r\n\r\nabc",
        400,
        "bad_request",
    ),
    (
        "chunked, identity",
        b"POST / HTTP/1.1\r\n" + H + b"Transfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n",
        400,
        "bad_request",
    ),
    (
        "two Transfer-Encodings",
        b"POST / HTTP/1.1\r\n" + H + CHUNKED + CHUNKED + b"\r\n0\r\n\r\n",
        400,
        "bad_request",
    ),
    (
        "space before the colon of Transfer-Encoding",
        b"POST / HTTP/1.1\r\n" + H + b"Transfer-Encoding : chunked\r\n\r\n0\r\n\r\n",
        400,
        "bad_request",
    ),
    (
        "Content-Length and Transfer-Encoding on HTTP/1.0",
        b"POST / HTTP/1.0\r\nContent-Length: 3\r\n" + CHUNKED + b"\r\nabc",
        400,
        "bad_request",
    ),
    (
        "Transfer-Encoding folded onto a second line",
        b"POST / HTTP/1.1\r\n" + H + b"Transfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n",
        400,
        "bad_request",
    ),
    (
        "vertical tab before chunked",
        b"POST / HTTP/1.1\r\n" + H + b"Transfer-Encoding: \x0bchunked\r\n\r\n0\r\n\r\n",
        400,
        "bad_request",
    ),
    (
        "chunked, with a trailing comma",
        b"POST / HTTP/1.1\r\n" + H + b"Transfer-Encoding: chunked,\r\n\r\n0\r\n\r\n",
        400,
        "bad_request",
    ),
    (
        "empty Transfer-Encoding",
        b"POST / HTTP/1.1\r\n" + H + b"Transfer-Encoding: \r\n\r\n",
        400,
        "bad_request",
    ),
    (
        "empty Content-Length",
        b"POST / HTTP/1.1\r\n" + H + b"Content-Length: \r\n\r\n",
        400,
        "bad_request",
    ),
    (
        "Content-Length of two numbers",
        b"POST / HTTP/1.1\r\n" + H + b"Content-Length: 1 2\r\n\r\nab",
        400,
        "bad_request",
    ),
    (
        "Transfer-Encoding on HTTP/1.0",
        b"POST / HTTP/1.0\r\n" + CHUNKED + b"\r\n0\r\n\r\n",
        400,
        "bad_request",
    ),
    (
        "identity coding",
        b"POST / HTTP/1.1\r\n" + H + b"Transfer-Encoding: identity\r\n\r\nabc",
        501,
        "not_implemented",
    ),
    (
        "gzip, chunked",
        b"POST / HTTP/1.1\r\n" + H + b"Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
        501,
        "not_implemented",
    ),
    (
        "xchunked",
        b"POST / HTTP/1.1\r\n" + H + b"Transfer-Encoding: xchunked\r\n\r\n0\r\n\r\n",
        501,
        "not_implemented",
    ),
    # Chunk-size tricks.
    (
        "negative chunk size",
        b"POST / HTTP/1.1\r\n" + H + CHUNKED + b"\r\n-1\r\nabc\r\n0\r\n\r\n",
        400,
        "bad_request",
    ),
    (
        "chunk size overflowing 64 bits",
        b"POST / HTTP/1.1\r\n" + H + CHUNKED + b"\r\nffffffffffffffffffff\r\nabc\r\n0\r\n\r\n",
        400,
        "bad_request",
    ),
    (
        "0x chunk size",
        b"POST / HTTP/1.1\r\n" + H + CHUNKED + b"\r\n0x3\r\nabc\r\n0\r\n\r\n",
        400,
        "bad_request",
    ),
    (
        "space after chunk size",
        b"POST / HTTP/1.1\r\n" + H + CHUNKED + b"\r\n3 \r\nabc\r\n0\r\n\r\n",
        400,
        "bad_request",
    ),
    (
        "space before chunk size",
        b"POST / HTTP/1.1\r\n" + H + CHUNKED + b"\r\n 3\r\nabc\r\n0\r\n\r\n",
        400,
        "bad_request",
    ),
    (
        "bare LF after chunk size",
        b"POST / HTTP/1.1\r\n" + H + CHUNKED + b"\r\n3\nabc\r\n0\r\n\r\n",
        400,
        "bad_request",
    ),
    (
        "empty chunk size",
        b"POST / HTTP/1.1\r\n" + H + CHUNKED + b"\r\n\r\nabc\r\n0\r\n\r\n",
        400,
        "bad_request",
    ),
    (
        "bare LF in a chunk extension",
        b"POST / HTTP/1.1\r\n" + H + CHUNKED + b"\r\n3;x\nabc\r\n0\r\n\r\n",
        400,
        "bad_request",
    ),
    (
        "bare LF after chunk data",
        b"POST / HTTP/1.1\r\n" + H + CHUNKED + b"\r\n3\r\nabc\n0\r\n\r\n",
        400,
        "bad_request",
    ),
    (
        "Content-Length in the trailer",
        b"POST / HTTP/1.1\r\n" + H + CHUNKED + b"\r\n3\r\nabc\r\n0\r\nContent-Length: 9\r\n\r\n",
        400,
        "bad_request",
    ),
    (
        "Transfer-Encoding in the trailer",
        b"POST / HTTP/1.1\r\n"
        + H
        + CHUNKED
        + b"\r\n3\r\nabc\r\n0\r\nTransfer-Encoding: gzip\r\n\r\n",
        400,
        "bad_request",
    ),
    (
        "obs-fold in the trailer",
        b"POST / HTTP/1.1\r\n" + H + CHUNKED + b"\r\n3\r\nabc\r\n0\r\nX-A: b\r\n c\r\n\r\n",
        400,
        "bad_request",
    ),
    (
        "chunk longer than its size",
        b"POST / HTTP/1.1\r\n" + H + CHUNKED + b"\r\n3\r\nabcd\r\n0\r\n\r\n",
        400,
        "bad_request",
    ),
    # The head's lines: CRLF only, no folding, no NUL or controls, well-formed fields.
    ("obs-fold", b"GET / HTTP/1.1\r\n" + H + b"X-A: b\r\n c\r\n\r\n", 400, "bad_request"),
    (
        "obs-fold with a tab",
        b"GET / HTTP/1.1\r\n" + H + b"X-A: b\r\n\tc\r\n\r\n",
        400,
        "bad_request",
    ),
    ("first header line folded", b"GET / HTTP/1.1\r\n Host: a\r\n\r\n", 400, "bad_request"),
    ("bare LF head", b"GET / HTTP/1.1\nHost: a\n\n", 400, "bad_request"),
    ("bare LF after a header", b"GET / HTTP/1.1\r\nHost: a\nX-A: b\r\n\r\n", 400, "bad_request"),
    ("bare CR after the request line", b"GET / HTTP/1.1\rHost: a\r\n\r\n", 400, "bad_request"),
    ("bare CR in a value", b"GET / HTTP/1.1\r\n" + H + b"X-A: b\rc\r\n\r\n", 400, "bad_request"),
    ("NUL in a value", b"GET / HTTP/1.1\r\n" + H + b"X-A: b\x00c\r\n\r\n", 400, "bad_request"),
    ("NUL in a name", b"GET / HTTP/1.1\r\n" + H + b"X\x00A: b\r\n\r\n", 400, "bad_request"),
    ("control in a value", b"GET / HTTP/1.1\r\n" + H + b"X-A: b\x01c\r\n\r\n", 400, "bad_request"),
    ("DEL in a value", b"GET / HTTP/1.1\r\n" + H + b"X-A: b\x7fc\r\n\r\n", 400, "bad_request"),
    ("space before a colon", b"GET / HTTP/1.1\r\n" + H + b"X-A : b\r\n\r\n", 400, "bad_request"),
    ("no colon", b"GET / HTTP/1.1\r\n" + H + b"XA\r\n\r\n", 400, "bad_request"),
    ("empty name", b"GET / HTTP/1.1\r\n" + H + b": b\r\n\r\n", 400, "bad_request"),
    ("space inside a name", b"GET / HTTP/1.1\r\n" + H + b"X A: b\r\n\r\n", 400, "bad_request"),
    ("slash in a name", b"GET / HTTP/1.1\r\n" + H + b"X/A: b\r\n\r\n", 400, "bad_request"),
    ("bare CR ending a line", b"GET / HTTP/1.1\r\nHost: a\r\r\n\r\n", 400, "bad_request"),
    ("LF CR ending a line", b"GET / HTTP/1.1\r\nHost: a\n\r\n", 400, "bad_request"),
    ("bare LF ending the head", b"GET / HTTP/1.1\r\n" + H + b"\n", 400, "bad_request"),
]

SERVED: list[tuple[str, bytes, bytes]] = [
    ("HTTP/1.1", b"GET /a HTTP/1.1\r\n" + H + b"\r\n", b"GET /a? "),
    ("HTTP/1.0 without Host", b"GET /a HTTP/1.0\r\n\r\n", b"GET /a? "),
    ("Host with a port", b"GET / HTTP/1.1\r\nHost: a.example:8080\r\n\r\n", b"GET /? "),
    ("IPv6 Host", b"GET / HTTP/1.1\r\nHost: [::1]:80\r\n\r\n", b"GET /? "),
    ("Host with OWS", b"GET / HTTP/1.1\r\nHost:  a \r\n\r\n", b"GET /? "),
    ("absolute-form", b"GET http://a/b?c=1 HTTP/1.1\r\n" + H + b"\r\n", b"GET /b?c=1 "),
    ("OPTIONS *", b"OPTIONS * HTTP/1.1\r\n" + H + b"\r\n", b"OPTIONS *? "),
    ("an empty line first", b"\r\nGET /a HTTP/1.1\r\n" + H + b"\r\n", b"GET /a? "),
    ("obs-text in a value", b"GET / HTTP/1.1\r\n" + H + b"X-A: b\xffc\r\n\r\n", b"GET /? "),
    (
        "chunk extension",
        b"POST / HTTP/1.1\r\n" + H + CHUNKED + b"\r\n3;x=y\r\nabc\r\n0\r\n\r\n",
        b"POST /? abc",
    ),
    (
        "upper-case chunked",
        b"POST / HTTP/1.1\r\n" + H + b"Transfer-Encoding: Chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
        b"POST /? abc",
    ),
]


class Counting:
    """text_app, counting the requests that reach it."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        self.calls += 1
        return text_app(environ, start_response)


@pytest.fixture
def app() -> Counting:
    return Counting()


@pytest.fixture
def live(app: Counting) -> Iterator[Live]:
    with serving(app, ServerSettings(timings=FAST.scaled(4), threads=2, max_body=1024)) as server:
        yield server


@pytest.mark.parametrize(
    ("head", "status", "code"), [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED]
)
def test_the_host_refuses_it_in_the_json_shape_and_closes(
    live: Live, app: Counting, head: bytes, status: int, code: str
) -> None:
    client = live.connect()
    client.send(head)
    reply = client.reply()
    assert (reply.status, reply.error()["code"]) == (status, code)
    assert reply.error()["message"]
    assert reply.headers["connection"] == "close"
    assert client.closed()
    assert app.calls == 0


@pytest.mark.parametrize(("head", "body"), [r[1:] for r in SERVED], ids=[r[0] for r in SERVED])
def test_the_host_serves_what_rfc_9112_allows(live: Live, head: bytes, body: bytes) -> None:
    client = live.connect()
    client.send(head)
    reply = client.reply()
    assert (reply.status, reply.body) == (200, body)


PIPELINED = [
    ("after a bodiless request", b"GET /a HTTP/1.1\r\n" + H + b"\r\n"),
    ("after a body of known length", b"POST /a HTTP/1.1\r\n" + H + b"Content-Length: 3\r\n\r\nabc"),
    ("after a chunked body", b"POST /a HTTP/1.1\r\n" + H + CHUNKED + b"\r\n3\r\nabc\r\n0\r\n\r\n"),
]


@pytest.mark.parametrize("first", [p[1] for p in PIPELINED], ids=[p[0] for p in PIPELINED])
@pytest.mark.parametrize(
    "second",
    [b"GET  /b HTTP/1.1\r\n" + H + b"\r\n", b"GET /b HTTP/1.1\r\n\r\n", b"GET /b\r\n\r\n"],
    ids=["two spaces", "no Host", "HTTP/0.9"],
)
def test_a_pipelined_request_is_checked_like_the_first(
    live: Live, app: Counting, first: bytes, second: bytes
) -> None:
    # Sent in one write: the second request starts inside the read that ends the first. As
    # for any refused pipelined request, the response before it ends the connection.
    client = live.connect()
    client.send(first + second)
    reply = client.reply()
    assert reply.status == 200 and reply.headers["connection"] == "close"
    assert client.closed()
    assert app.calls == 1


def test_a_request_line_sent_byte_by_byte_is_checked(live: Live, app: Counting) -> None:
    client = live.connect()
    for byte in b"GET  /b HTTP/1.1\r\n":
        client.send(bytes([byte]))
    client.send(H + b"\r\n")
    reply = client.reply()
    assert (reply.status, reply.error()["code"]) == (400, "bad_request")
    assert app.calls == 0


def headers_app(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
    """Echo the request's headers as the app sees them, and its body."""
    body = environ["wsgi.input"].read()
    start_response("200 OK", [("Content-Type", "application/json")])
    seen = {k: v for k, v in environ.items() if k.startswith("HTTP_")}
    return [json.dumps({"headers": seen, "body": body.decode()}).encode()]


def test_trailer_fields_never_reach_the_app_as_headers() -> None:
    # Merged, a trailer would add a second Host, or credentials, after the head was checked.
    trailer = b"0\r\nHost: evil\r\nAuthorization: Bearer x\r\nX-Forwarded-For: 1.2.3.4\r\n\r\n"
    with serving(headers_app, ServerSettings(timings=FAST.scaled(4), threads=2)) as live:
        client = live.connect()
        client.send(b"POST / HTTP/1.1\r\n" + H + CHUNKED + b"\r\n3\r\nabc\r\n" + trailer)
        reply = client.reply()
    assert reply.status == 200
    seen = json.loads(reply.body)
    assert seen == {
        "headers": {"HTTP_HOST": "a", "HTTP_TRANSFER_ENCODING": "chunked"},
        "body": "abc",
    }


def test_well_formed_pipelined_requests_are_all_served(live: Live, app: Counting) -> None:
    client = live.connect()
    client.send(b"".join(p[1] for p in PIPELINED) + b"GET /end HTTP/1.1\r\n" + H + b"\r\n")
    bodies = [client.reply().body for _ in range(4)]
    assert bodies == [b"GET /a? ", b"POST /a? abc", b"POST /a? abc", b"GET /end? "]

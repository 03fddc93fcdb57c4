"""The lean HTTP/1.1 transport: framing, keep-alive, stale connections, errors."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable, Iterator

import httpx2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.transport import StreamingTransport

Handler = Callable[[socket.socket, bytes], None]


class RawServer:
    """A loopback server that answers each request with a scripted raw-bytes handler."""

    def __init__(self, handlers: list[Handler]) -> None:
        self.handlers, self.connections, self.requests = handlers, 0, []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        with contextlib.suppress(OSError):  # the client went away: nothing to answer
            self._exchange(conn)

    def _exchange(self, conn: socket.socket) -> None:
        buf = b""
        while self.handlers:
            while b"\r\n\r\n" not in buf:
                data = conn.recv(65536)
                if not data:
                    return
                buf += data
            head, _, buf = buf.partition(b"\r\n\r\n")
            length = next(
                (
                    int(v)
                    for k, _, v in (h.partition(b":") for h in head.split(b"\r\n"))
                    if k.lower() == b"content-length"
                ),
                0,
            )
            while len(buf) < length:
                buf += conn.recv(65536)
            body, buf = buf[:length], buf[length:]
            self.requests.append((head, body))
            self.handlers.pop(0)(conn, body)

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def client() -> Iterator[httpx2.Client]:
    with httpx2.Client(transport=StreamingTransport(), timeout=5) as c:
        yield c


def chunked(parts: list[bytes]) -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in parts) + b"0\r\n\r\n"


def respond(raw: bytes, close: bool = False) -> Handler:
    def handler(conn: socket.socket, body: bytes) -> None:
        conn.sendall(raw)
        if close:
            conn.close()

    return handler


HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"


@settings(max_examples=60, deadline=None)
@given(
    parts=st.lists(st.binary(min_size=1, max_size=300), min_size=1, max_size=20),
    cuts=st.lists(st.integers(min_value=1, max_value=4000), max_size=12),
)
def test_chunked_bodies_reassemble_whatever_the_network_splits(
    parts: list[bytes], cuts: list[int]
) -> None:
    raw = HEAD + chunked(parts)

    def send_in_pieces(conn: socket.socket, body: bytes) -> None:
        points = sorted({c for c in cuts if c < len(raw)})
        for a, b in zip([0, *points], [*points, len(raw)], strict=True):
            conn.sendall(raw[a:b])

    server = RawServer([send_in_pieces])
    try:
        with (
            httpx2.Client(transport=StreamingTransport(), timeout=5) as c,
            c.stream("POST", server.url + "/v1/messages", content=b"{}") as response,
        ):
            assert response.status_code == 200
            assert b"".join(response.iter_bytes()) == b"".join(parts)
    finally:
        server.close()


def test_a_connection_is_reused_after_a_whole_response(client: httpx2.Client) -> None:
    server = RawServer(
        [
            respond(HEAD + chunked([b"a", b"b"])),
            respond(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"),
        ]
    )
    try:
        assert client.post(server.url + "/x", content=b"1").content == b"ab"
        assert client.post(server.url + "/x", content=b"2").content == b"ok"
        assert server.connections == 1
        assert server.requests[1][1] == b"2"
    finally:
        server.close()


def test_a_stale_pooled_connection_is_replaced(client: httpx2.Client) -> None:
    server = RawServer(
        [
            respond(b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\n1", close=True),
            respond(b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\n2"),
        ]
    )
    try:
        assert client.get(server.url + "/").content == b"1"
        assert client.get(server.url + "/").content == b"2"
        assert server.connections == 2
    finally:
        server.close()


def test_error_statuses_and_close_delimited_bodies(client: httpx2.Client) -> None:
    body = b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
    server = RawServer(
        [
            respond(
                b"HTTP/1.1 529 Overloaded\r\nretry-after: 2\r\nconnection: close\r\n\r\n" + body,
                close=True,
            )
        ]
    )
    try:
        response = client.post(server.url + "/v1/messages", content=b"{}")
        assert response.status_code == 529 and response.headers["retry-after"] == "2"
        assert response.json()["error"]["type"] == "overloaded_error"
    finally:
        server.close()


def test_a_stream_cut_mid_chunk_is_a_transport_error(client: httpx2.Client) -> None:
    server = RawServer([respond(HEAD + b"10\r\nonly-half", close=True)])
    try:
        with pytest.raises(httpx2.TransportError), client.stream("GET", server.url) as response:
            b"".join(response.iter_bytes())
    finally:
        server.close()


def test_connect_errors_are_httpx2_connect_errors(client: httpx2.Client) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(httpx2.ConnectError):
        client.get(f"http://127.0.0.1:{port}/")


def test_an_idle_connection_the_server_answered_408_on_is_not_reused(
    client: httpx2.Client,
) -> None:
    def answer_then_408(conn: socket.socket, body: bytes) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\n1")
        conn.sendall(b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\n\r\n")
        conn.close()

    server = RawServer([answer_then_408, respond(b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\n2")])
    try:
        assert client.get(server.url + "/").content == b"1"
        import time

        time.sleep(0.1)
        second = client.get(server.url + "/")
        assert (second.status_code, second.content) == (200, b"2")
    finally:
        server.close()


def test_bodiless_responses_do_not_wait_for_a_body(client: httpx2.Client) -> None:
    server = RawServer(
        [
            respond(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n"),
            respond(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\n"),
        ]
    )
    try:
        assert client.post(server.url + "/", content=b"x").status_code == 204
        assert client.head(server.url + "/").status_code == 200
    finally:
        server.close()


@pytest.mark.parametrize("length", [b"-3", b"2, 2", b"lots"])
def test_bad_content_lengths_are_protocol_errors(client: httpx2.Client, length: bytes) -> None:
    server = RawServer([respond(b"HTTP/1.1 200 OK\r\ncontent-length: " + length + b"\r\n\r\nab")])
    try:
        with pytest.raises(httpx2.RemoteProtocolError):
            client.get(server.url + "/")
    finally:
        server.close()


def test_an_aborted_connection_never_returns_to_the_pool() -> None:
    transport = StreamingTransport()
    server = RawServer([respond(HEAD + chunked([b"a"])), respond(HEAD + chunked([b"b"]))])
    try:
        with httpx2.Client(transport=transport, timeout=5) as client:
            with client.stream("GET", server.url) as response:
                assert b"".join(response.stream) == b"a"  # read whole, body not yet closed
                response.extensions["network_stream"].abort()
            assert not any(transport._idle.values())
            assert client.get(server.url).content == b"b"
            assert server.connections == 2
    finally:
        server.close()


def test_an_abort_after_the_body_closed_leaves_the_reused_connection_alone() -> None:
    import time

    def slow(conn: socket.socket, body: bytes) -> None:
        conn.sendall(HEAD)
        time.sleep(0.3)  # the late abort lands while this body is still awaited
        conn.sendall(chunked([b"b"]))

    transport = StreamingTransport()
    server = RawServer([respond(HEAD + chunked([b"a"])), slow])
    try:
        with httpx2.Client(transport=transport, timeout=5) as client:
            with client.stream("GET", server.url) as response:
                assert b"".join(response.iter_bytes()) == b"a"  # closes: pooled
                late = response.extensions["network_stream"]
            with client.stream("GET", server.url) as second:
                late.abort()  # must not touch the socket the second request now uses
                assert b"".join(second.iter_bytes()) == b"b"
            assert server.connections == 1
    finally:
        server.close()


def test_pooled_connections_work_with_descriptors_above_1024(client: httpx2.Client) -> None:
    import os

    filler = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]  # push fd numbers up
    server = RawServer(
        [
            respond(b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\n1"),
            respond(b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\n2"),
        ]
    )
    try:
        assert client.get(server.url + "/").content == b"1"
        assert client.get(server.url + "/").content == b"2"
        assert server.connections == 1
    finally:
        server.close()
        for fd in filler:
            os.close(fd)

"""HTTP/1.1 wire pieces for the lean transport: a buffered connection, heads and bodies."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any

import httpx2

Key = tuple[str, str, int]
MAX_HEADER_BYTES = 64 * 1024
RECV = 65536


class Connection:
    """One socket and the bytes read from it; `pos` marks what is consumed (no re-copying)."""

    def __init__(self, key: Key, sock: socket.socket) -> None:
        self.key, self.sock, self.buffer, self.pos = key, sock, b"", 0
        self.received = 0  # bytes of the current exchange: a retry is safe only at 0
        self.broken = False  # shut down by an abort: never pooled again
        # Each response gets the exchange number it was read on; once its body is closed the
        # number moves on, so a late abort can never reach the next user of the socket.
        self.exchange = 0
        self.lock = threading.Lock()

    def available(self) -> int:
        """Bytes read but not consumed."""
        return len(self.buffer) - self.pos

    def fill(self) -> bool:
        """Read more bytes; False at end of stream."""
        try:
            data = self.sock.recv(RECV)
        except TimeoutError as err:
            raise httpx2.ReadTimeout("timed out reading from the model") from err
        except OSError as err:
            raise httpx2.ReadError(f"connection to the model failed: {err}") from err
        self.buffer = self.buffer[self.pos :] + data
        self.pos = 0
        self.received += len(data)
        return bool(data)

    def take(self, size: int) -> bytes:
        """Consume and return `size` available bytes."""
        data = self.buffer[self.pos : self.pos + size]
        self.pos += size
        return data

    def line(self) -> bytes:
        """Return the next CRLF-terminated line, without its CRLF."""
        while (end := self.buffer.find(b"\r\n", self.pos)) < 0:
            if self.available() > MAX_HEADER_BYTES or not self.fill():
                raise httpx2.RemoteProtocolError("the model closed the connection mid-response")
        line = self.buffer[self.pos : end]
        self.pos = end + 2
        return line

    def close(self) -> None:
        """Close the socket."""
        with contextlib.suppress(OSError):
            self.sock.close()


def encode_request(request: httpx2.Request) -> bytes:
    """Return the request line, headers and body as bytes."""
    body = request.read()
    lines = [b"%s %s HTTP/1.1" % (request.method.encode(), request.url.raw_path)]
    headers = request.headers
    if "host" not in headers:
        lines.append(b"Host: " + request.url.netloc)
    lines += [name + b": " + value for name, value in headers.raw]
    if body and "content-length" not in headers and "transfer-encoding" not in headers:
        lines.append(b"Content-Length: %d" % len(body))
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


def read_head(conn: Connection) -> tuple[bytes, int, bytes, list[tuple[bytes, bytes]]]:
    """Read a status line and headers; skip interim (1xx) responses."""
    while True:
        status_line = conn.line()
        try:
            version, status, *reason = status_line.split(b" ", 2)
            code = int(status)
        except ValueError as err:
            raise httpx2.RemoteProtocolError(f"bad status line {status_line[:80]!r}") from err
        headers = []
        while line := conn.line():
            name, _, value = line.partition(b":")
            headers.append((name.strip(), value.strip()))
        if not 100 <= code < 200:
            return version, code, reason[0] if reason else b"", headers


class Body(httpx2.SyncByteStream):
    """A response body read straight off the socket: chunked, sized or until close."""

    def __init__(
        self,
        conn: Connection,
        headers: httpx2.Headers,
        version: bytes,
        bodiless: bool,
        release: Callable[[Connection], None],
    ) -> None:
        self.conn, self.release = conn, release
        self.chunked = not bodiless and "chunked" in headers.get("transfer-encoding", "").lower()
        self.remaining = 0 if bodiless else _content_length(headers, self.chunked)
        closing = headers.get("connection", "").lower() == "close" or version == b"HTTP/1.0"
        self.reusable = not closing and (self.chunked or self.remaining is not None)
        self.done = False

    def __iter__(self) -> Iterator[bytes]:
        if self.chunked:
            yield from self._chunked()
        elif self.remaining is not None:
            yield from self._sized()
        else:
            yield from self._until_close()
        self.done = True

    def _chunked(self) -> Iterator[bytes]:
        conn, parts = self.conn, []
        while True:
            size_line = conn.line()
            try:
                size = int(size_line.split(b";", 1)[0], 16)
            except ValueError as err:
                raise httpx2.RemoteProtocolError(f"bad chunk size {size_line[:40]!r}") from err
            if size == 0:
                while conn.line():  # trailers
                    pass
                if parts:
                    yield b"".join(parts)
                return
            while conn.available() < size + 2:
                if parts:  # hand over what is complete before blocking on the network
                    yield b"".join(parts)
                    parts = []
                if not conn.fill():
                    raise httpx2.RemoteProtocolError("the model closed the stream mid-chunk")
            parts.append(conn.take(size))
            conn.pos += 2
            if conn.buffer.find(b"\r\n", conn.pos) < 0:
                yield b"".join(parts)
                parts = []

    def _sized(self) -> Iterator[bytes]:
        conn = self.conn
        while self.remaining:
            if not conn.available() and not conn.fill():
                raise httpx2.RemoteProtocolError("the model closed the connection early")
            data = conn.take(min(self.remaining, conn.available()))
            self.remaining -= len(data)
            yield data

    def _until_close(self) -> Iterator[bytes]:
        conn = self.conn
        while True:
            if conn.available():
                yield conn.take(conn.available())
            if not conn.fill():
                return

    def close(self) -> None:
        """Pool the connection if the body was read whole and nothing broke it, else close."""
        conn, self.conn = self.conn, None  # type: ignore[assignment]
        if conn is None:
            return
        with conn.lock:
            conn.exchange += 1
            reuse = self.done and self.reusable and not conn.available() and not conn.broken
        if reuse:
            self.release(conn)
        else:
            conn.close()


class NetworkStream:
    """What the engine's abort needs: the socket, and a way to retire the connection."""

    def __init__(self, conn: Connection) -> None:
        self._conn, self._exchange = conn, conn.exchange

    def get_extra_info(self, info: str) -> Any:
        """Return the socket for "socket"; None for anything else."""
        return self._conn.sock if info == "socket" else None

    def abort(self) -> None:
        """Break the connection now (wakes a blocked recv) and keep it out of the pool."""
        conn = self._conn
        with conn.lock:
            if conn.exchange != self._exchange:
                return  # this response's body is closed; the socket may serve someone else
            conn.broken = True
            with contextlib.suppress(OSError):
                conn.sock.shutdown(socket.SHUT_RDWR)


def _content_length(headers: httpx2.Headers, chunked: bool) -> int | None:
    value = headers.get("content-length")
    if value is None or chunked:
        return None
    try:
        length = int(value)
    except ValueError:
        length = -1
    if length < 0:
        raise httpx2.RemoteProtocolError(f"bad Content-Length {value[:40]!r}")
    return length

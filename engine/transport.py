"""A lean HTTP/1.1 transport for the SDK's streamed calls: one recv per read, no layers.

httpx2's default stack (httpcore + h11) costs about 60 us of CPU per received chunk; a
streamed reply arrives one small chunk per event, so that cost dominated the whole turn.
This transport plugs into the official SDK (`http_client=httpx2.Client(transport=...)`),
parses the status line, headers and chunked framing itself, and keeps idle connections
for reuse. Stalls are the watchdog's job (it shuts the socket down), so reads only need a
generous timeout as a backstop.
"""

from __future__ import annotations

import contextlib
import os
import socket
import ssl
import threading
from collections.abc import Iterator
from typing import Any

import certifi
import httpx2

Key = tuple[str, str, int]
MAX_HEADER_BYTES = 64 * 1024
RECV = 65536


def proxy_configured() -> bool:
    """True if the environment asks for a proxy, which this transport does not speak."""
    names = ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY")
    return any(os.environ.get(n) or os.environ.get(n.lower()) for n in names)


class Connection:
    """One socket and the bytes read from it; `pos` marks what is consumed (no re-copying)."""

    def __init__(self, key: Key, sock: socket.socket) -> None:
        self.key, self.sock, self.buffer, self.pos = key, sock, b"", 0

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


class StreamingTransport(httpx2.BaseTransport):
    """HTTP/1.1 over plain or TLS sockets with a small keep-alive pool."""

    def __init__(self, pool_size: int = 64) -> None:
        self._idle: dict[Key, list[Connection]] = {}
        self._lock = threading.Lock()
        self._pool_size = pool_size
        self._tls = ssl.create_default_context(cafile=certifi.where())

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        """Send the request and return a response whose body streams from the socket."""
        url = request.url
        key = (url.scheme, url.host, url.port or (443 if url.scheme == "https" else 80))
        timeouts = request.extensions.get("timeout", {})
        payload = _encode(request)
        conn = self._checkout(key)
        if conn is not None:
            try:
                return self._exchange(conn, payload, timeouts)
            except (httpx2.ReadError, httpx2.RemoteProtocolError):
                conn.close()  # an idle connection the server had closed: use a new one
        return self._exchange(self._connect(key, timeouts), payload, timeouts)

    def _exchange(
        self, conn: Connection, payload: bytes, timeouts: dict[str, Any]
    ) -> httpx2.Response:
        conn.sock.settimeout(timeouts.get("read"))
        try:
            conn.sock.sendall(payload)
        except OSError as err:
            raise httpx2.WriteError(f"could not send the request: {err}") from err
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
        body = Body(self, conn, httpx2.Headers(headers), version)
        extensions = {
            "http_version": version,
            "reason_phrase": reason[0] if reason else b"",
            "network_stream": NetworkStream(conn.sock),
        }
        return httpx2.Response(code, headers=headers, stream=body, extensions=extensions)

    def _connect(self, key: Key, timeouts: dict[str, Any]) -> Connection:
        scheme, host, port = key
        try:
            sock = socket.create_connection((host, port), timeout=timeouts.get("connect"))
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if scheme == "https":
                sock = self._tls.wrap_socket(sock, server_hostname=host)
        except TimeoutError as err:
            raise httpx2.ConnectTimeout(f"timed out connecting to {host}:{port}") from err
        except OSError as err:
            raise httpx2.ConnectError(f"could not connect to {host}:{port}: {err}") from err
        return Connection(key, sock)

    def _checkout(self, key: Key) -> Connection | None:
        with self._lock:
            idle = self._idle.get(key)
            return idle.pop() if idle else None

    def release(self, conn: Connection) -> None:
        """Keep a connection whose response was read to the end, if there is room."""
        with self._lock:
            idle = self._idle.setdefault(conn.key, [])
            if len(idle) < self._pool_size:
                idle.append(conn)
                return
        conn.close()

    def close(self) -> None:
        """Close every idle connection."""
        with self._lock:
            idle, self._idle = self._idle, {}
        for conns in idle.values():
            for conn in conns:
                conn.close()


class Body(httpx2.SyncByteStream):
    """A response body read straight off the socket: chunked, sized or until close."""

    def __init__(
        self,
        transport: StreamingTransport,
        conn: Connection,
        headers: httpx2.Headers,
        version: bytes,
    ) -> None:
        self.transport, self.conn = transport, conn
        self.chunked = "chunked" in headers.get("transfer-encoding", "").lower()
        length = headers.get("content-length")
        self.remaining = int(length) if length is not None and not self.chunked else None
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
        """Return the connection to the pool if the body was read whole, else close it."""
        conn, self.conn = self.conn, None  # type: ignore[assignment]
        if conn is None:
            return
        if self.done and self.reusable and not conn.available():
            self.transport.release(conn)
        else:
            conn.close()


class NetworkStream:
    """What the engine's abort needs: the socket, as httpcore exposes it."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def get_extra_info(self, info: str) -> Any:
        """Return the socket for "socket"; None for anything else."""
        return self._sock if info == "socket" else None


def _encode(request: httpx2.Request) -> bytes:
    body = request.read()
    target = request.url.raw_path
    lines = [b"%s %s HTTP/1.1" % (request.method.encode(), target)]
    headers = request.headers
    if "host" not in headers:
        lines.append(b"Host: " + request.url.netloc)
    lines += [name + b": " + value for name, value in headers.raw]
    if body and "content-length" not in headers and "transfer-encoding" not in headers:
        lines.append(b"Content-Length: %d" % len(body))
    return b"\r\n".join(lines) + b"\r\n\r\n" + body

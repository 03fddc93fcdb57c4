"""A lean HTTP/1.1 transport for the SDK's streamed calls: one recv per read, no layers.

httpx2's default stack (httpcore + h11) costs about 60 us of CPU per received chunk; a
streamed reply arrives one small chunk per event, so that cost dominated the whole turn.
This transport plugs into the official SDK (`http_client=httpx2.Client(transport=...)`),
does the HTTP/1.1 framing itself (engine/http11.py) and keeps idle connections for reuse.
Stalls are the watchdog's job (it shuts the socket down), so reads only need a generous
timeout as a backstop.
"""

from __future__ import annotations

import os
import select
import socket
import ssl
import threading
from typing import Any

import certifi
import httpx2

from engine.http11 import Body, Connection, Key, NetworkStream, encode_request, read_head


def proxy_configured() -> bool:
    """True if the environment asks for a proxy, which this transport does not speak."""
    names = ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY")
    return any(os.environ.get(n) or os.environ.get(n.lower()) for n in names)


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
        payload = encode_request(request)
        head_only = request.method == "HEAD"
        conn = self._checkout(key)
        if conn is not None:
            try:
                return self._exchange(conn, payload, timeouts, head_only)
            except BaseException as err:
                conn.close()
                stale = isinstance(
                    err, httpx2.ReadError | httpx2.WriteError | httpx2.RemoteProtocolError
                )
                if not stale or conn.received:  # never send a request twice once answered
                    raise
        conn = self._connect(key, timeouts)
        try:
            return self._exchange(conn, payload, timeouts, head_only)
        except BaseException:
            conn.close()
            raise

    def _exchange(
        self, conn: Connection, payload: bytes, timeouts: dict[str, Any], head_only: bool
    ) -> httpx2.Response:
        conn.sock.settimeout(timeouts.get("read"))
        try:
            conn.sock.sendall(payload)
        except OSError as err:
            raise httpx2.WriteError(f"could not send the request: {err}") from err
        version, code, reason, headers = read_head(conn)
        bodiless = head_only or code in (204, 304)
        body = Body(conn, httpx2.Headers(headers), version, bodiless, self.release)
        extensions = {
            "http_version": version,
            "reason_phrase": reason,
            "network_stream": NetworkStream(conn),
        }
        return httpx2.Response(code, headers=headers, stream=body, extensions=extensions)

    def _connect(self, key: Key, timeouts: dict[str, Any]) -> Connection:
        scheme, host, port = key
        sock = None
        try:
            sock = socket.create_connection((host, port), timeout=timeouts.get("connect"))
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if scheme == "https":
                sock = self._tls.wrap_socket(sock, server_hostname=host)
        except OSError as err:
            if sock is not None:
                sock.close()
            if isinstance(err, TimeoutError):
                raise httpx2.ConnectTimeout(f"timed out connecting to {host}:{port}") from err
            raise httpx2.ConnectError(f"could not connect to {host}:{port}: {err}") from err
        return Connection(key, sock)

    def _checkout(self, key: Key) -> Connection | None:
        while True:
            with self._lock:
                idle = self._idle.get(key)
                conn = idle.pop() if idle else None
            if conn is None:
                return None
            # An idle socket with something to read was closed (or answered 408) by the
            # server; that must not be mistaken for the reply to our next request.
            try:
                poller = select.poll()  # unlike select(), fine with descriptors >= 1024
                poller.register(conn.sock, select.POLLIN)
                idle_ok = not poller.poll(0)
            except (OSError, ValueError):
                idle_ok = False
            if idle_ok:
                conn.received = 0
                return conn
            conn.close()

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

"""Outages of what the app depends on: a proxy in front of PostgreSQL or Redis that goes down.

`ServiceProxy` listens on a loopback port of its own and forwards to the real service. When
it goes down it aborts every open connection and stops listening, so new connections are
refused, as when the service itself stops; when it comes up it listens on the same port
again. The real service stays up for every other test.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from urllib.parse import urlsplit, urlunsplit


class ServiceProxy:
    """Forwards 127.0.0.1:<port> to a service's port until it is taken down."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self._pairs: list[tuple[socket.socket, socket.socket]] = []
        self._lock = threading.Lock()
        self._listener: socket.socket | None = None
        self.up()

    def url(self, url: str) -> str:
        """`url` (the real service's) pointed at this proxy instead."""
        parts = urlsplit(url)
        host = parts.netloc.rsplit("@", 1)
        netloc = (host[0] + "@" if len(host) == 2 else "") + f"127.0.0.1:{self.port}"
        return urlunsplit(parts._replace(netloc=netloc))

    def up(self) -> None:
        """Accept and forward connections again."""
        with self._lock:
            if self._listener is not None:
                return
            self._listener = socket.create_server(("127.0.0.1", self.port))
            listener = self._listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def down(self) -> None:
        """Refuse new connections and break every open one."""
        with self._lock:
            listener, self._listener = self._listener, None
            pairs, self._pairs = self._pairs, []
        if listener is not None:
            _abort(listener)
        for pair in pairs:
            for sock in pair:
                _abort(sock)

    def close(self) -> None:
        """Down for good."""
        self.down()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port))
            except OSError:
                _abort(client)
                continue
            with self._lock:
                if self._listener is not listener:  # went down meanwhile
                    _abort(client)
                    _abort(upstream)
                    return
                self._pairs.append((client, upstream))
            for src, dst in ((client, upstream), (upstream, client)):
                threading.Thread(target=_pipe, args=(src, dst), daemon=True).start()


def _pipe(src: socket.socket, dst: socket.socket) -> None:
    try:
        while chunk := src.recv(65536):
            dst.sendall(chunk)
    except OSError:
        pass
    finally:
        _abort(src)
        _abort(dst)


def _abort(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.close()

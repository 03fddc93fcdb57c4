"""Outages of what the app depends on: PostgreSQL or Redis going down, SQLite failing.

`ServiceProxy` listens on a loopback port of its own and forwards to the real service. When
it goes down it aborts every open connection and stops listening, so new connections are
refused, as when the service itself stops; when it comes up it listens on the same port
again. When it freezes it keeps accepting connections and bytes but forwards nothing either
way, as a service that hangs (stopped, swapping, behind a dead link) while its host's kernel
still answers; when it thaws, what it held goes through. The real service stays up for every
other test. `failing_statements` makes every
statement of a SQLAlchemy engine fail as SQLite does on a full disk.
"""

from __future__ import annotations

import contextlib
import socket
import sqlite3
import threading
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from sqlalchemy import Engine, event


@contextlib.contextmanager
def failing_statements(engine: Engine) -> Iterator[threading.Event]:
    """While the yielded event is set, every statement fails as on a full disk."""
    down = threading.Event()

    def fail(*_: Any) -> None:
        if down.is_set():
            raise sqlite3.OperationalError("database or disk is full")

    event.listen(engine, "before_cursor_execute", fail)
    try:
        yield down
    finally:
        event.remove(engine, "before_cursor_execute", fail)


def assert_storage_unavailable(response: Any) -> None:
    """A 503 of the one error shape that says when to come back."""
    assert response.status_code == 503, response.text
    assert response.json()["error"]["code"] == "storage_unavailable"
    assert int(response.headers["retry-after"]) >= 1


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
        self._flowing = threading.Event()  # cleared while frozen
        self._flowing.set()
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
            abort(listener)
        for pair in pairs:
            for sock in pair:
                abort(sock)

    def freeze(self) -> None:
        """Accept connections and bytes, forward nothing, answer nothing, until thawed."""
        self._flowing.clear()

    def thaw(self) -> None:
        """Forward again, what was held first."""
        self._flowing.set()

    def close(self) -> None:
        """Down for good."""
        self.thaw()
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
                abort(client)
                continue
            with self._lock:
                if self._listener is not listener:  # went down meanwhile
                    abort(client)
                    abort(upstream)
                    return
                self._pairs.append((client, upstream))
            for src, dst in ((client, upstream), (upstream, client)):
                kwargs = {"gate": self._flowing}
                threading.Thread(target=pipe, args=(src, dst), kwargs=kwargs, daemon=True).start()


def pipe(
    src: socket.socket,
    dst: socket.socket,
    seen: Callable[[bytes], None] | None = None,
    gate: threading.Event | None = None,
) -> None:
    """Copy `src` to `dst` (showing each chunk to `seen`, holding it while `gate` is clear)
    until either side ends; close both."""
    try:
        while chunk := src.recv(65536):
            if seen is not None:
                seen(chunk)
            if gate is not None:
                gate.wait()
            dst.sendall(chunk)
    except OSError:
        pass
    finally:
        abort(src)
        abort(dst)


def abort(sock: socket.socket) -> None:
    """Close a socket at once, both ways, whatever state it is in."""
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.close()

"""A loopback Anthropic Messages API server that injects scripted faults into its streams."""

from __future__ import annotations

import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from types import TracebackType
from typing import Any

from tests.faults.handler import Handler, Server, expected_reply, shutdown
from tests.faults.kinds import (
    CutToolAtMaxTokens,
    ErrorAfter,
    Fault,
    Normal,
    ResetAfter,
    StallAfter,
    Status,
    Transcript,
)

__all__ = [
    "CutToolAtMaxTokens",
    "ErrorAfter",
    "Fault",
    "FaultyUpstream",
    "Normal",
    "ResetAfter",
    "StallAfter",
    "Status",
    "Transcript",
    "expected_reply",
]

Chooser = Callable[[int, dict[str, Any]], Fault]


class FaultyUpstream:
    """Serves POST /v1/messages over real sockets, one scripted fault per request."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        # Each request's beta header values, and the refusals the server gave before a fault.
        self.betas: list[set[str]] = []
        self.refusals: list[str] = []
        self.served: list[str] = []
        self.stalling = threading.Event()  # set once a StallAfter went quiet
        self.default: Fault = Normal()
        self._queue: deque[Fault] = deque()
        self._chooser: Chooser | None = None
        self._lock = threading.RLock()  # a chooser may call script()
        self._conns: set[socket.socket] = set()
        self._conns_changed = threading.Condition(self._lock)
        self._closing = threading.Event()
        self._server = Server(("127.0.0.1", 0), Handler)
        self._server.upstream = self
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def __enter__(self) -> FaultyUpstream:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def script(self, *faults: Fault) -> None:
        """Queue faults; each request takes the next one (then `default`)."""
        with self._lock:
            self._queue.extend(faults)

    def set_chooser(self, fn: Chooser | None) -> None:
        """Pick each request's fault with `fn(request_index, body)` instead of the queue."""
        with self._lock:
            self._chooser = fn

    def expected_reply(self, body: dict[str, Any]) -> list[bytes]:
        """Return the SSE events of the normal reply to `body`."""
        return expected_reply(body)

    def close(self, wait: float = 5.0) -> None:
        """Stop serving, cut open connections and wait for handler threads to finish."""
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()
        deadline = time.monotonic() + wait
        with self._conns_changed:
            for conn in self._conns:
                shutdown(conn)
            while self._conns and (left := deadline - time.monotonic()) > 0:
                self._conns_changed.wait(left)
        self._thread.join(wait)

    def active_connections(self) -> int:
        """Return how many connections still have a handler thread."""
        with self._lock:
            return len(self._conns)

    def _admit(self, body: dict[str, Any], betas: set[str] | None = None) -> tuple[int, Fault]:
        with self._lock:
            index = len(self.requests)
            self.requests.append(body)
            self.betas.append(betas or set())
            if self._chooser is not None:
                fault = self._chooser(index, body)
            else:
                fault = self._queue.popleft() if self._queue else self.default
            self.served.append(type(fault).__name__)
            return index, fault

    def _reject(self, body: dict[str, Any], betas: set[str] | None = None, why: str = "") -> None:
        with self._lock:
            self.requests.append(body)
            self.betas.append(betas or set())
            self.refusals.append(why)
            self.served.append("Rejected")

    def _register(self, conn: socket.socket) -> bool:
        with self._conns_changed:
            self._conns.add(conn)
            # close() sets `closing` before it walks `_conns`, so a late arrival sees the flag.
            return not self._closing.is_set()

    def _unregister(self, conn: socket.socket) -> None:
        with self._conns_changed:
            self._conns.discard(conn)
            self._conns_changed.notify_all()

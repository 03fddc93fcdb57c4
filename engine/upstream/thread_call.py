"""A model call read by a thread: its byte stream, and an abort that works from any thread.

Used when no event loop runs the engine's streams (the WSGI-only server, the CLI, tests
that drive turns directly); under the ASGI server, engine/turns/attempt.py reads them.
"""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import Any

import httpx2

from streaming.sse import iter_json_events

log = logging.getLogger(__name__)
POLL = 0.05


class CallAborted(Exception):
    """The call was aborted (cancel or stall) before the response arrived."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class UpstreamCall:
    """One model call read by a thread: its events, and an abort from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._response: httpx2.Response | None = None
        self._chunks: Iterator[bytes] | None = None
        self._done = False
        self.abort_reason: str | None = None

    def events(self) -> Iterator[dict[str, Any]]:
        """Yield the stream's decoded events."""
        assert self._chunks is not None
        return iter_json_events(self._chunks)

    def abort(self, reason: str) -> None:
        """Break the connection so a read blocked on it returns at once; first reason wins."""
        # All under the lock: once _finish() has run the connection may be pooled and
        # reused by another turn, so a late shutdown must never reach it.
        with self._lock:
            if self._done or self.abort_reason is not None:
                return
            self.abort_reason = reason
            if self._response is not None:
                _break(self._response)

    def _attach(self, response: httpx2.Response, chunks: Iterator[bytes]) -> bool:
        with self._lock:
            if self.abort_reason is not None:
                return False
            self._response, self._chunks = response, chunks
            return True

    def _finish(self) -> None:
        # After this, abort() never touches the socket: it may go back to the pool.
        with self._lock:
            self._done = True


def open_in_background(
    manager: AbstractContextManager[Any], call: UpstreamCall
) -> AbstractContextManager[Any]:
    """Wait for the response headers in a helper thread so an abort need not wait for them."""
    box: dict[str, Any] = {}
    ready = threading.Event()

    def opener() -> None:
        try:
            response = manager.__enter__()
        except BaseException as err:
            box["error"] = err
            ready.set()
            return
        if call._attach(response.http_response, _body(response.http_response)):
            box["ok"] = True
        else:
            manager.__exit__(None, None, None)  # nobody waits for it any more
        ready.set()

    threading.Thread(target=opener, name="model-open", daemon=True).start()
    while not ready.wait(POLL):
        if call.abort_reason is not None:
            break
    if call.abort_reason is not None:
        if call._response is not None:
            # Attached before the abort: the opener is about to return; close its response.
            # (Unattached, the opener sees the abort in _attach and closes it itself.)
            ready.wait()
            manager.__exit__(None, None, None)
        raise CallAborted(call.abort_reason)
    if "error" in box:
        raise box["error"]
    if "ok" not in box:
        raise CallAborted(call.abort_reason or "aborted")
    return manager


def _break(response: httpx2.Response) -> None:
    """Shut the response's connection down; shutdown(), unlike close(), wakes a recv()."""
    stream = response.extensions.get("network_stream")
    if stream is None:
        return
    sock = stream.get_extra_info("socket")
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            log.debug("upstream socket already closed")


def _body(response: httpx2.Response) -> Iterator[bytes]:
    """The body's bytes; straight from the transport unless they need decompressing."""
    if response.headers.get("content-encoding", "identity") == "identity":
        return iter(response.stream)  # type: ignore[arg-type]
    return response.iter_bytes()

"""An SSE client that follows a turn to its end across dropped connections and workers."""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Callable

import httpx2


class Follower:
    """Reads a turn's events, reconnecting with Last-Event-ID after any drop.

    With `rng`, it also drops the connection itself at random points, as flaky networks do.
    """

    def __init__(self, base_url: str, path: str, rng: random.Random | None = None) -> None:
        self.base_url, self.path, self.rng = base_url, path, rng
        self.stitched, self.last, self.reconnects = b"", 0, 0
        self.finished = False

    def run(self, timeout: float = 180.0) -> bytes:
        """Follow until turn_end (or a 204: nothing after `last`); return the stitched events."""
        deadline = time.monotonic() + timeout
        while not self.finished and time.monotonic() < deadline:
            # A drop means the worker serving us died or left: reconnect elsewhere.
            with contextlib.suppress(httpx2.TransportError, httpx2.StreamError):
                self._read_once()
            if not self.finished:
                self.reconnects += 1
                time.sleep(0.05)  # a client's pause before it reconnects
        if not self.finished:
            raise AssertionError(f"{self.path}: no turn_end after {timeout}s (last {self.last})")
        return self.stitched

    def read_until(self, done: Callable[[bytes], bool], timeout: float = 60.0) -> None:
        """Follow until `done(stitched)` holds, then drop the connection."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx2.TransportError, httpx2.StreamError):
                self._read_once(done)
            if done(self.stitched):
                return
            if self.finished:
                raise AssertionError("the turn ended first")
        raise AssertionError(f"{self.path}: not reached in {timeout}s")

    def _read_once(self, done: Callable[[bytes], bool] | None = None) -> None:
        limit = self.rng.choice([None, self.rng.randint(1, 40)]) if self.rng else None
        headers = {"Last-Event-ID": str(self.last)}
        with (
            httpx2.Client(base_url=self.base_url, timeout=httpx2.Timeout(30, read=60)) as client,
            client.stream("GET", self.path, headers=headers) as response,
        ):
            if response.status_code == 204:
                self.finished = True  # the turn ended and we have every event
                return
            if response.status_code == 503:
                time.sleep(0.2)  # the database is out (Retry-After): come back
                return
            if response.status_code != 200:
                response.read()
                raise AssertionError(f"{self.path}: HTTP {response.status_code} {response.text}")
            buffer, count = b"", 0
            for chunk in response.iter_raw():
                buffer += chunk
                while b"\n\n" in buffer:
                    frame, buffer = buffer.split(b"\n\n", 1)
                    if not frame.startswith(b"id: "):
                        continue  # a keep-alive comment
                    self.stitched += frame + b"\n\n"
                    self.last = int(frame.split(b"\n", 1)[0][4:])
                    if b"\nevent: turn_end\n" in frame:
                        self.finished = True
                        return
                    count += 1
                    if limit is not None and count >= limit:
                        return  # drop the connection mid-stream
                    if done is not None and done(self.stitched):
                        return

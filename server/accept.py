"""Accept waiting connections in bursts, and refuse newcomers near the descriptor limit.

Since libuv 1.45 (uvloop bundles it) a listening socket yields one connection per turn of
the loop. A loop busy with hundreds of streams turns 15 to 40 times a second, so when new
turns arrived faster than that they queued in the kernel's accept queue: at 500 streams
started over 10 s, clients waited up to 2.4 s before the server saw their request. Here the
listening socket is watched by the loop directly and each wake-up accepts up to BURST
connections, as asyncio's own loop does; the burst is bounded so that, with several
workers on one socket, one worker never takes every waiting connection at once.

Each connection holds a file descriptor. Once the open ones reach the process's limit less
a reserve (the app's own descriptors: database, Redis, spool files), a newcomer is answered
503 at once, rather than every newcomer (and /healthz) waiting in the accept queue for a
descriptor that never comes while accept() fails with EMFILE.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import resource
import socket
from collections.abc import Callable

from config import Timings
from server.heads import Refused, error_response
from streaming.hosting import RenderError, plain_error

log = logging.getLogger(__name__)
BURST = 16


def raise_fd_limit() -> int:
    """Raise the soft limit of open files to the hard limit; return the soft limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError) as exc:
            log.warning("could not raise the open files limit to %d: %s", hard, exc)
    return soft


class DescriptorGuard:
    """Counts open connections against the descriptor limit less a reserve for the app."""

    def __init__(
        self,
        open_connections: Callable[[], int],
        reserve: int,
        timings: Timings,
        limit: int | None = None,
        render: RenderError = plain_error,
    ) -> None:
        self.open_connections = open_connections
        self.capacity = (raise_fd_limit() if limit is None else limit) - reserve
        self.refusal = error_response(Refused.busy(timings), render)
        self.refusing = False

    def full(self, connecting: int) -> bool:
        """Whether a newcomer must be refused, with `connecting` connections being set up."""
        full = self.open_connections() + connecting >= self.capacity
        if full != self.refusing:
            self.refusing = full
            if full:
                log.warning("%d connections open: refusing new ones (503)", self.capacity)
            else:
                log.warning("taking new connections again")
        return full

    def refuse(self, conn: socket.socket) -> None:
        """Answer 503 on a just accepted, non-blocking socket, and close it."""
        # Straight on the socket (no transport, no task): it must cost nothing when the
        # worker is full. What the client sent already is read first, so that the close
        # sends a FIN after the answer rather than a reset that could discard it.
        with contextlib.suppress(OSError):
            conn.recv(65536)
        with contextlib.suppress(OSError):
            conn.send(self.refusal)
        conn.close()


class Acceptor:
    """Watches one listening socket and hands every accepted connection to a new protocol."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        listener: socket.socket,
        protocol_factory: Callable[[], asyncio.Protocol],
        timings: Timings,
        guard: DescriptorGuard | None = None,
        backlog: int = 2048,
    ) -> None:
        self.loop, self.listener, self.protocol_factory = loop, listener, protocol_factory
        self.timings, self.guard = timings, guard
        self.connecting: set[asyncio.Task[object]] = set()
        self.closed = False
        self._resume: asyncio.TimerHandle | None = None
        listener.listen(backlog)  # gunicorn's sockets listen already: this only sets the backlog
        listener.setblocking(False)
        loop.add_reader(listener.fileno(), self._accept)

    def close(self) -> None:
        """Stop accepting (the listening socket itself stays open)."""
        self.closed = True
        if self._resume is not None:
            self._resume.cancel()
        self.loop.remove_reader(self.listener.fileno())

    def _accept(self) -> None:
        for _ in range(BURST):
            try:
                conn, _address = self.listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                if exc.errno == errno.ECONNABORTED:  # the client gave up while it waited
                    continue
                # Out of file descriptors, say: the socket stays readable, so retrying at
                # once would spin the loop on the same error.
                pause = self.timings.accept_pause
                log.warning("accept() failed, pausing for %g s: %s", pause, exc)
                self.loop.remove_reader(self.listener.fileno())
                self._resume = self.loop.call_later(pause, self._reopen)
                return
            conn.setblocking(False)
            if self.guard is not None and self.guard.full(len(self.connecting)):
                self.guard.refuse(conn)
                continue
            if conn.family in (socket.AF_INET, socket.AF_INET6):
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            task = self.loop.create_task(self._connect(conn))
            self.connecting.add(task)
            task.add_done_callback(self.connecting.discard)

    def _reopen(self) -> None:
        self._resume = None
        if not self.closed:
            self.loop.add_reader(self.listener.fileno(), self._accept)

    async def _connect(self, conn: socket.socket) -> None:
        try:
            await self.loop.connect_accepted_socket(self.protocol_factory, conn)
        except OSError as exc:  # the client went away before its transport was made
            log.debug("dropped a connection while setting it up: %s", exc)
            conn.close()

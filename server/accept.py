"""Accept waiting connections in bursts: libuv takes only one per loop iteration.

Since libuv 1.45 (uvloop bundles it) a listening socket yields one connection per turn of
the loop. A loop busy with hundreds of streams turns 15 to 40 times a second, so when new
turns arrived faster than that they queued in the kernel's accept queue: at 500 streams
started over 10 s, clients waited up to 2.4 s before the server saw their request. Here the
listening socket is watched by the loop directly and each wake-up accepts up to BURST
connections, as asyncio's own loop does; the burst is bounded so that, with several
workers on one socket, one worker never takes every waiting connection at once.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import socket
from collections.abc import Callable

log = logging.getLogger(__name__)
BURST = 16
# After a failed accept() other than a client giving up (out of file descriptors, say): the
# socket stays readable, so retrying at once would spin the loop on the same error.
PAUSE = 0.1


class Acceptor:
    """Watches one listening socket and hands every accepted connection to a new protocol."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        listener: socket.socket,
        protocol_factory: Callable[[], asyncio.Protocol],
        backlog: int = 2048,
    ) -> None:
        self.loop, self.listener, self.protocol_factory = loop, listener, protocol_factory
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
                log.warning("accept() failed, pausing for %g s: %s", PAUSE, exc)
                self.loop.remove_reader(self.listener.fileno())
                self._resume = self.loop.call_later(PAUSE, self._reopen)
                return
            conn.setblocking(False)
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

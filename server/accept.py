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
import logging
import socket
from collections.abc import Callable

log = logging.getLogger(__name__)
BURST = 16


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
        listener.listen(backlog)  # gunicorn's sockets listen already: this only sets the backlog
        listener.setblocking(False)
        loop.add_reader(listener.fileno(), self._accept)

    def close(self) -> None:
        """Stop accepting (the listening socket itself stays open)."""
        self.loop.remove_reader(self.listener.fileno())

    def _accept(self) -> None:
        for _ in range(BURST):
            try:
                conn, _address = self.listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                # Out of file descriptors, or the peer gave up: the next wake-up tries again.
                log.warning("accept() failed: %s", exc)
                return
            conn.setblocking(False)
            if conn.family in (socket.AF_INET, socket.AF_INET6):
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            task = self.loop.create_task(self._connect(conn))
            self.connecting.add(task)
            task.add_done_callback(self.connecting.discard)

    async def _connect(self, conn: socket.socket) -> None:
        try:
            await self.loop.connect_accepted_socket(self.protocol_factory, conn)
        except OSError as exc:  # the client went away before its transport was made
            log.debug("dropped a connection while setting it up: %s", exc)
            conn.close()

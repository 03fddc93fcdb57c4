"""The server: acceptors, connections, the WSGI pool and the app's background, on one loop.

`Server` is what a gunicorn worker (server/worker.py) runs; `serve_in_thread` runs one on
its own loop in a thread, for tests and benchmarks.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
from collections.abc import Coroutine
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import uvloop

from config import Settings, Timings
from server.accept import Acceptor, DescriptorGuard
from server.http import HttpConnection, Site
from server.wsgi import WSGIPool
from streaming.hosting import Hosted, WSGIApp

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ServerSettings:
    """How a server serves: its timings, body limit, app threads and descriptor reserve."""

    timings: Timings = field(default_factory=Timings)
    max_body: int = 256 * 1024
    # Statement uploads (POST /api/imports) may be larger: IMPORT_MAX_BYTES.
    upload_max_body: int = 20 * 1024 * 1024
    upload_paths: frozenset[str] = frozenset({"/api/imports"})
    threads: int = 16
    express_threads: int = 2  # for the app's express paths (health checks, metrics)
    # Descriptors kept for the app (database, Redis, spool files) when connections abound.
    fd_reserve: int = 64
    multiprocess: bool = False  # wsgi.multiprocess: other processes serve the same app

    @classmethod
    def from_env(cls) -> ServerSettings:
        """Settings from MAX_REQUEST_BYTES, HTTP_THREADS and the timings' variables."""
        settings = Settings.from_env()
        return cls(
            timings=settings.timings,
            max_body=settings.max_request_bytes,
            upload_max_body=settings.import_max_bytes,
            threads=settings.http_threads,
        )


class Server:
    """Serves a WSGI app, and runs its background work, on listening sockets."""

    def __init__(
        self, hosted: Hosted | WSGIApp, sockets: list[socket.socket], settings: ServerSettings
    ) -> None:
        if not isinstance(hosted, Hosted):
            hosted = Hosted(hosted)
        self.background = hosted.background
        self.sockets, self.settings = sockets, settings
        self.pool = WSGIPool(hosted.wsgi, settings.threads, settings.multiprocess)
        self.express: WSGIPool | None = None
        if hosted.express and settings.express_threads > 0:
            self.express = WSGIPool(
                hosted.wsgi, settings.express_threads, settings.multiprocess, "express"
            )
        self.site = Site(
            self.pool,
            settings.timings,
            settings.max_body,
            self.express,
            hosted.express,
            hosted.render_error,
            hosted.access_log,
            uploads=(settings.upload_paths, settings.upload_max_body),
        )
        self.acceptors: list[Acceptor] = []
        self._hurry = asyncio.Event()
        self._stopping: asyncio.Future[None] | None = None

    async def start(self) -> None:
        """Start the app's threads and background work, then take connections."""
        loop, settings = asyncio.get_running_loop(), self.settings
        for pool in self._pools():
            pool.start()
        if self.background is not None:
            try:
                await self.background.start()
            except BaseException:
                for pool in self._pools():
                    pool.stop()
                raise
        connections = self.site.connections
        guard = DescriptorGuard(
            lambda: len(connections),
            settings.fd_reserve,
            settings.timings,
            render=self.site.render_error,
        )
        factory = partial(HttpConnection, self.site)
        self.acceptors = [
            Acceptor(loop, sock, factory, settings.timings, guard) for sock in self.sockets
        ]

    async def shutdown(self, graceful: bool) -> None:
        """Stop; graceful lets responses and streams finish first. A quick call hurries one."""
        if not graceful:
            self._hurry.set()
        if self._stopping is None:
            self._stopping = asyncio.ensure_future(self._stop(graceful))
        await asyncio.shield(self._stopping)

    async def _stop(self, graceful: bool) -> None:
        timings, site = self.settings.timings, self.site
        drain = None
        if graceful and self.background is not None:
            drain = asyncio.ensure_future(self.background.drain())
        for acceptor in self.acceptors:
            acceptor.close()
        setting_up = [task for acceptor in self.acceptors for task in acceptor.connecting]
        await asyncio.gather(*setting_up, return_exceptions=True)
        site.stopping = True
        for connection in list(site.connections):
            connection.stop()  # idle ones close now, busy ones after their response
        if graceful and site.connections:
            await _first(site.emptied.wait(), self._hurry.wait(), timeout=timings.graceful_shutdown)
        await self._close_all()
        if drain is not None:
            if self._hurry.is_set():
                drain.cancel()
            try:
                await drain
            except asyncio.CancelledError:
                pass
            except Exception:
                log.exception("the app's background failed to drain")
        if self.background is not None:
            await self.background.stop()
        for pool in self._pools():
            pool.stop()

    def _pools(self) -> list[WSGIPool]:
        return [self.pool] if self.express is None else [self.pool, self.express]

    async def _close_all(self) -> None:
        tasks = []
        for connection in list(self.site.connections):
            if connection.task is not None:
                tasks.append(connection.task)
            connection.transport.abort()  # its serving task is cancelled; streams are closed
        if tasks:
            await asyncio.wait(tasks, timeout=self.settings.timings.graceful_shutdown)


async def _first(*waits: Coroutine[Any, Any, Any], timeout: float) -> None:
    """Wait for the first of `waits` to end, or for `timeout`."""
    futures = [asyncio.ensure_future(w) for w in waits]
    await asyncio.wait(futures, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    for future in futures:
        future.cancel()


class RunningServer:
    """A Server on its own uvloop loop in a daemon thread (tests and benchmarks)."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.loop = uvloop.new_event_loop()
        self.started = threading.Event()
        self.error: BaseException | None = None  # why start() failed, if it did
        self.thread = threading.Thread(target=self._run, name="http-server", daemon=True)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_until_complete(self.server.start())
        except BaseException as exc:
            self.error = exc
        self.started.set()
        if self.error is None:
            self.loop.run_forever()
        tasks = asyncio.all_tasks(self.loop)
        for task in tasks:
            task.cancel()
        self.loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
        self.loop.close()

    def close(self, graceful: bool = True, timeout: float = 30) -> None:
        """Shut the server down (its listening socket stays open) and end the thread."""
        if self.error is None and self.thread.is_alive():
            stopping = asyncio.run_coroutine_threadsafe(self.server.shutdown(graceful), self.loop)
            try:
                stopping.result(timeout)
            finally:
                self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout)


def serve_in_thread(
    hosted: Hosted | WSGIApp, sock: socket.socket, settings: ServerSettings | None = None
) -> RunningServer:
    """Start serving `sock` on a new loop in a daemon thread; wait on `.started`."""
    running = RunningServer(Server(hosted, [sock], settings or ServerSettings()))
    running.thread.start()
    return running

"""The gunicorn worker class: uvicorn on uvloop, draining the turn engine on SIGTERM."""

from __future__ import annotations

import asyncio
import socket
from types import FrameType
from typing import Any

from uvicorn.server import Server
from uvicorn_worker import UvicornWorker

from server.accept import Acceptor
from server.protocol import JSONHttpToolsProtocol


class FrontServer(Server):
    """uvicorn's server, accepting in bursts and telling the app to drain when stopping."""

    def __init__(self, config: Any) -> None:
        super().__init__(config)
        self.acceptors: list[Acceptor] = []

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        """Start the app; serve gunicorn's sockets through acceptors (server/accept.py)."""
        if sockets is None or self.config.ssl is not None:
            await super().startup(sockets)
            return
        await super().startup(sockets=[])  # the lifespan, without uvicorn's own servers
        loop = asyncio.get_running_loop()
        backlog = self.config.backlog
        self.acceptors = [Acceptor(loop, _socket(s), self._protocol, backlog) for s in sockets]

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """Stop accepting first, then shut down as uvicorn does."""
        for acceptor in self.acceptors:
            acceptor.close()
        await super().shutdown(sockets)

    def _protocol(self) -> Any:
        # What uvicorn's startup builds for its own servers.
        return self.config.http_protocol_class(  # type: ignore[call-arg]
            config=self.config, server_state=self.server_state, app_state=self.lifespan.state
        )

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        """First signal: streams end and turns move on; uvicorn then waits for both."""
        begin = getattr(self.config.app, "begin_drain", None)
        if begin is not None and not self.should_exit:
            begin()
        super().handle_exit(sig, frame)


class Worker(UvicornWorker):
    """One worker process: an event loop for streams, threads for Flask and the turns."""

    CONFIG_KWARGS: dict[str, Any] = {
        "loop": "uvloop",
        "http": JSONHttpToolsProtocol,  # httptools, refusing in the JSON error shape
        "lifespan": "on",
        # Longer than DRAIN_SECONDS: streams end at once, turns move within the drain.
        "timeout_graceful_shutdown": 30,
    }

    async def _serve(self) -> None:
        self.config.app = self.wsgi
        server = FrontServer(config=self.config)
        self._install_sigquit_handler()
        await server.serve(sockets=self.sockets)
        if not server.started:
            raise SystemExit(3)  # gunicorn's worker boot error


def _socket(sock: Any) -> socket.socket:
    """The socket inside one of gunicorn's listener wrappers."""
    return getattr(sock, "sock", sock)

"""The gunicorn worker class: uvicorn on uvloop, draining the turn engine on SIGTERM."""

from __future__ import annotations

from types import FrameType
from typing import Any

from uvicorn.server import Server
from uvicorn_worker import UvicornWorker

from server.protocol import JSONHttpToolsProtocol


class _Server(Server):
    """uvicorn's server, telling the app to drain as soon as it is asked to stop."""

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
        server = _Server(config=self.config)
        self._install_sigquit_handler()
        await server.serve(sockets=self.sockets)
        if not server.started:
            raise SystemExit(3)  # gunicorn's worker boot error

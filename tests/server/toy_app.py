"""A toy hosted app for the gunicorn worker's tests: its background logs to TOY_LOG."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from streaming.hosting import STREAM_HOOK, Hosted


class Background:
    """Writes each call to TOY_LOG; `start` fails when TOY_FAIL is set."""

    def __init__(self) -> None:
        self.drained: asyncio.Event | None = None

    def log(self, line: str) -> None:
        """Append `line` to the log."""
        with Path(os.environ["TOY_LOG"]).open("a") as log:
            log.write(line + "\n")

    async def start(self) -> None:
        """Fail if told to, else start."""
        if os.environ.get("TOY_FAIL"):
            raise RuntimeError("the toy background refuses to start")
        self.drained = asyncio.Event()
        self.log("start")

    async def drain(self) -> None:
        """End the streams."""
        self.log("drain")
        assert self.drained is not None
        self.drained.set()

    async def stop(self) -> None:
        """Log the stop."""
        self.log("stop")


background = Background()


def wsgi(environ: dict[str, Any], start_response: Any) -> Any:
    """`/stream` streams until the worker drains; anything else answers `ok`."""
    start_response("200 OK", [("Content-Type", "text/plain")])
    if environ["PATH_INFO"] != "/stream":
        return [b"ok"]

    async def parts() -> AsyncIterator[bytes]:
        yield b"first"
        assert background.drained is not None
        await background.drained.wait()
        yield b"last"

    return environ[STREAM_HOOK](parts)


hosted = Hosted(wsgi, background)

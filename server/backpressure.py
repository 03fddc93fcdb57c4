"""Flow control of a connection's writes: whether the client takes bytes, and for how long
it may not before it is dropped (`slow_reader`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable


class Backpressure:
    """The client's side of writing: whether it takes bytes, and how long it may not."""

    def __init__(self, loop: asyncio.AbstractEventLoop, patience: float) -> None:
        self.loop, self.patience = loop, patience
        self.paused = False
        self._slow: asyncio.TimerHandle | None = None
        self._writable: asyncio.Future[None] | None = None

    def pause(self, drop: Callable[[], None]) -> None:
        """The client's buffers are full: `drop` it unless it takes bytes within `patience`."""
        self.paused = True
        self._slow = self.loop.call_later(self.patience, drop)

    def resume(self) -> None:
        """The client took bytes again: a waiting writer may write."""
        self.paused = False
        if self._slow is not None:
            self._slow.cancel()
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)

    async def writable(self) -> None:
        """Wait until the client takes bytes again."""
        self._writable = self.loop.create_future()
        await self._writable

    def cancel(self) -> None:
        """The connection is gone: the slow-reader timer with it."""
        if self._slow is not None:
            self._slow.cancel()

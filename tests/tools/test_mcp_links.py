"""A server link stops when its task is cancelled, whatever the SDK makes of the cancellation.

The mcp SDK's task groups can turn a cancellation that reaches them while they connect into
another error (seen as a ConnectError: the link went on reconnecting, and an engine stopping
its hub waited on it for ever). The double below does the same, on purpose, every time.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx2

from config import Timings
from tools.mcp_servers.config import McpServerConfig
from tools.mcp_servers.links import ServerLink

TIMINGS = Timings().scaled(0.05)


class SwallowingLink(ServerLink):
    """A link whose connection attempts turn a cancellation into a ConnectError."""

    attempts = 0
    swallow = True

    def _connect(self) -> Any:
        @contextlib.asynccontextmanager
        async def connecting() -> AsyncIterator[Any]:
            self.attempts += 1
            try:
                await asyncio.sleep(3600)  # a server that never answers
            except asyncio.CancelledError:
                if self.swallow:
                    raise httpx2.ConnectError("All connection attempts failed") from None
                raise
            yield None

        return connecting()


def test_a_link_cancelled_while_it_connects_stops_though_the_sdk_swallows_the_cancel() -> None:
    async def main() -> tuple[bool, int]:
        link = SwallowingLink(
            McpServerConfig(name="web", url="http://127.0.0.1:9"), TIMINGS, lambda: None
        )
        task = asyncio.create_task(link.run())
        while link.attempts == 0:
            await asyncio.sleep(0.001)
        task.cancel()
        done, _ = await asyncio.wait({task}, timeout=5)
        stopped = task in done and task.cancelled()
        if not stopped:  # let it go, so that the test ends either way
            link.swallow = False
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        return stopped, link.attempts

    stopped, attempts = asyncio.run(main())
    assert stopped, "the link went on after it was cancelled"
    assert attempts == 1

"""One model attempt run in the event loop: upstream bytes to stored rows and client frames.

No thread waits per event: the loop reads the upstream socket, feeds the message round,
and hands each database write the round asks for to a thread pool, awaiting it before the
round goes on (so a row is still stored before its event is shown). The turn's thread only
waits for the attempt's outcome.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any

from engine.turns.pacing import Cadence, Pacer
from engine.turns.round import MessageRound, RoundResult
from engine.upstream.client import ModelClient
from engine.upstream.thread_call import CallAborted
from streaming.sse import JSONEvents


class LoopCall:
    """An attempt running in the loop, abortable from any thread (watchdog, cancel)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.abort_reason: str | None = None
        self.task: asyncio.Task[Any] | None = None
        self.writing = False

    def abort(self, reason: str) -> None:
        """Stop the attempt at once; the first reason wins."""
        if self.abort_reason is None:
            self.abort_reason = reason
        self.loop.call_soon_threadsafe(self._abort_now)

    def _abort_now(self) -> None:
        # Never in the middle of a write: the attempt stops right after it instead, so a
        # row is never written behind the back of the discard that follows.
        if self.task is not None and not self.writing:
            self.task.cancel()


def run_in_loop(
    model: ModelClient,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    current: MessageRound,
    call: LoopCall,
    pool: Executor,
    pacer: Pacer | None = None,
) -> RoundResult:
    """From the turn's thread: run one attempt in the loop and wait for its outcome."""
    future = asyncio.run_coroutine_threadsafe(
        attempt(model, messages, tools, current, call, pool, pacer), call.loop
    )
    return future.result()


async def attempt(
    model: ModelClient,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    current: MessageRound,
    call: LoopCall,
    pool: Executor,
    pacer: Pacer | None = None,
) -> RoundResult:
    """Stream one model message through `current`; raise CallAborted when aborted."""
    call.task = asyncio.current_task()
    loop = asyncio.get_running_loop()

    async def store(write: Callable[[], None]) -> None:
        call.writing = True
        try:
            await loop.run_in_executor(pool, write)
        finally:
            call.writing = False
        if call.abort_reason is not None:
            raise CallAborted(call.abort_reason)

    try:
        if call.abort_reason is not None:
            raise CallAborted(call.abort_reason)
        async with model.aopen(messages, tools) as chunks:
            events = JSONEvents()
            cadence = Cadence(pacer) if pacer is not None else None
            try:
                async for chunk in chunks:
                    if cadence is not None:
                        cadence.arrived()
                    for event in events.feed(chunk):
                        for write in current.feed(event):
                            await store(write)
                    if cadence is not None:
                        await cadence.next()
            finally:
                if cadence is not None:
                    cadence.close()
            events.flush()
        for write in current.finish():
            await store(write)
    except asyncio.CancelledError:
        raise CallAborted(call.abort_reason or "cancelled") from None
    assert current.result is not None
    return current.result

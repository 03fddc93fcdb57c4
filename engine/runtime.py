"""The one event loop the engine runs on, and the two pools its blocking work goes to.

Every line of the engine runs in this loop: turns, model streams, event logs, readers, the
heartbeat and the reaper are its tasks. Database statements run in the store pool and tool
handlers in the tool pool, both of a fixed size. A server hands the engine its own loop
(`adopt`, at startup); anywhere else (Flask's test client, `flask run`, the CLI) the engine
starts a loop of its own, in one thread, the first time it is needed. Code in other threads
(Flask views) reaches the loop only through `run`, `submit`, `call_soon` and `iterate`.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Coroutine, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

from streaming.hosting import BodyFactory

T = TypeVar("T")


class Runtime:
    """The engine's loop (adopted, or its own in a thread) and its fixed thread pools."""

    def __init__(self, store_threads: int = 8, tool_threads: int = 8) -> None:
        self.store_pool = ThreadPoolExecutor(store_threads, thread_name_prefix="store")
        self.tool_pool = ThreadPoolExecutor(tool_threads, thread_name_prefix="tool")
        self._sizes = (store_threads, tool_threads)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def adopt(self, loop: asyncio.AbstractEventLoop) -> None:
        """Run the engine in `loop` (a server's, which serves its requests too)."""
        with self._lock:
            if self._loop is not None and self._loop is not loop:
                raise RuntimeError("the engine already runs in another loop")
            self._loop = loop

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The engine's loop, started in a thread of its own if no server gave one."""
        loop = self._loop
        if loop is not None:
            return loop
        with self._lock:
            if self._loop is None:
                self._loop = self._own_loop()
            return self._loop

    @property
    def started(self) -> bool:
        """True once the engine has a loop."""
        return self._loop is not None

    def prestart(self) -> None:
        """Start every pool thread now, so a worker's thread count never grows with load."""
        for pool, size in zip((self.store_pool, self.tool_pool), self._sizes, strict=True):
            barrier = threading.Barrier(size + 1)
            for _ in range(size):
                pool.submit(barrier.wait)
            barrier.wait()

    def in_loop(self) -> bool:
        """True when called from the loop's own thread."""
        try:
            return asyncio.get_running_loop() is self._loop
        except RuntimeError:
            return False

    def submit(self, coro: Coroutine[Any, Any, T]) -> Future[T]:
        """Schedule `coro` in the loop from any thread; return its future."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """From a thread other than the loop's: run `coro` in the loop and return its result."""
        if self.in_loop():
            coro.close()
            raise RuntimeError("Runtime.run() would block the engine's own loop")
        return self.submit(coro).result(timeout)

    def call_soon(self, fn: Callable[..., Any], *args: Any) -> None:
        """Call `fn(*args)` in the loop, from any thread."""
        self.loop.call_soon_threadsafe(fn, *args)

    def iterate(self, body: BodyFactory) -> Iterator[bytes]:
        """A plain generator over an async body: how a stream is served without a host hook."""
        stream = body()
        try:
            while True:
                try:
                    yield self.run(_next(stream))
                except StopAsyncIteration:
                    return
        finally:
            self.run(_close(stream))

    def _own_loop(self) -> asyncio.AbstractEventLoop:
        """A new loop running forever in a daemon thread (no server gave one)."""
        loop = asyncio.new_event_loop()
        ready = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(loop)
            loop.call_soon(ready.set)
            loop.run_forever()

        self._thread = threading.Thread(target=run, name="engine-loop", daemon=True)
        self._thread.start()
        ready.wait()
        return loop

    def close(self) -> None:
        """Stop a loop of the engine's own and its thread; shut the pools down."""
        thread, loop = self._thread, self._loop
        if thread is not None and loop is not None:
            self.run(_cancel_tasks())
            loop.call_soon_threadsafe(loop.stop)
            thread.join(10)
            loop.close()
            self._loop = self._thread = None
        self.store_pool.shutdown(wait=False, cancel_futures=True)
        self.tool_pool.shutdown(wait=False, cancel_futures=True)


def this_task() -> asyncio.Task[Any]:
    """The task running the caller (every coroutine of the engine runs in one)."""
    task = asyncio.current_task()
    if task is None:
        raise RuntimeError("not called from a task")
    return task


async def _next(stream: AsyncIterator[bytes]) -> bytes:
    """The stream's next chunk, awaited in a coroutine (what the loop is handed)."""
    return await anext(stream)


async def _close(stream: AsyncIterator[bytes]) -> None:
    """Run the cleanup of a body that is an async generator (its `finally` blocks)."""
    if isinstance(stream, AsyncGenerator):
        await stream.aclose()


async def _cancel_tasks() -> None:
    """Cancel every other task of the running loop and wait for them to end."""
    tasks = asyncio.all_tasks() - {asyncio.current_task()}
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)

"""The gunicorn worker class: our HTTP host (server/serve.py) on a uvloop event loop.

It follows gunicorn's documented extension point, `gunicorn.workers.base.Worker`: gunicorn
calls `init_process` (which installs signals, loads the app and calls `run`), and the
worker calls `notify` to show it is alive. SIGTERM (a rolling deploy, `kill -HUP` of the
master, a recycled worker) stops taking connections and drains the app's background work
while running responses and streams end by themselves; SIGINT and SIGQUIT stop at once.
"""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import sys
from dataclasses import replace

import uvloop
from gunicorn.arbiter import Arbiter  # type: ignore[import-untyped]
from gunicorn.workers.base import Worker as BaseWorker  # type: ignore[import-untyped]

from server.serve import Server, ServerSettings

# Collections stop every stream while they run. With the default thresholds (700, 10, 10) a
# worker with 500 streams ran about 7 young collections a second and a full one every 20 s
# that took 110-130 ms; almost nothing they freed was cyclic. These thresholds made the
# collector's total time a sixth and the worst added latency about half (README, Performance).
GC_THRESHOLDS = (5000, 20, 100)


class Worker(BaseWorker):  # type: ignore[misc]
    """One worker process: an event loop for connections and streams, threads for the app."""

    alive: bool  # gunicorn's: False once the worker was told to stop

    def init_process(self) -> None:
        """Make the event loop (signals are installed on it), then boot as gunicorn does."""
        self.loop = uvloop.new_event_loop()
        asyncio.set_event_loop(self.loop)
        self.quick = False
        self.stopping = asyncio.Event()
        self.server: Server | None = None
        super().init_process()

    def init_signals(self) -> None:
        """Handle the worker's signals in the event loop."""
        for sig in self.SIGNALS:
            signal.signal(sig, signal.SIG_DFL)
        add = self.loop.add_signal_handler
        add(signal.SIGTERM, self.stop, False)
        add(signal.SIGINT, self.stop, True)
        add(signal.SIGQUIT, self.stop, True)
        add(signal.SIGUSR1, self.log.reopen_files)
        add(signal.SIGABRT, self.abort)

    def stop(self, quick: bool) -> None:
        """Stop serving: gracefully (SIGTERM), or at once (SIGINT, SIGQUIT), even mid-drain."""
        if quick and not self.quick:
            self.quick = True
            self.cfg.worker_int(self)
            if self.server is not None and not self.alive:  # hurry a graceful stop under way
                self.loop.create_task(self.server.shutdown(graceful=False))
        self.alive = False
        self.stopping.set()

    def abort(self) -> None:
        """SIGABRT (the master's timeout): exit now."""
        self.alive = False
        self.cfg.worker_abort(self)
        sys.exit(1)

    def run(self) -> None:
        """Serve until stopped, then close the loop."""
        try:
            self.loop.run_until_complete(self.serve())
        finally:
            tasks = asyncio.all_tasks(self.loop)
            for task in tasks:
                task.cancel()
            self.loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
            self.loop.close()

    async def serve(self) -> None:
        """Start the server on gunicorn's sockets, beat while serving, and shut it down."""
        settings = replace(ServerSettings.from_env(), multiprocess=self.cfg.workers > 1)
        server = Server(self.wsgi, [listener.sock for listener in self.sockets], settings)
        # The app's own heartbeat is about a second: often enough for gunicorn's timeout,
        # and it runs while the app starts, which may take a while (orphaned turns resume).
        beat = self.loop.create_task(self.beat(settings.timings.heartbeat))
        try:
            await server.start()
        except Exception:
            self.log.exception("the worker failed to start")
            sys.exit(Arbiter.WORKER_BOOT_ERROR)
        self.server = server
        # The application that runs gunicorn may want to know (`make run` prints its link).
        serving = getattr(self.app, "serving", None)
        if serving is not None:
            serving(self)
        # What is loaded by now (modules, the app, its engine) lives as long as the worker:
        # the collector's full passes need not scan it again and again.
        gc.freeze()
        gc.set_threshold(*GC_THRESHOLDS)
        await self.stopping.wait()
        await server.shutdown(graceful=not self.quick)
        beat.cancel()

    async def beat(self, interval: float) -> None:
        """Tell the master we are alive every `interval`; stop if the master is gone."""
        while True:
            self.notify()
            if self.alive and self.ppid != os.getppid():
                self.log.info("Parent changed, shutting down: %s", self)
                self.stop(quick=False)
            await asyncio.sleep(interval)

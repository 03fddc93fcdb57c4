"""One worker's engine from start to stop: the app's background work on the host's loop.

`start` registers the worker and starts its heartbeat and reaper; `drain` (SIGTERM) stops
taking turns, lets running ones finish, and hands the rest over to other workers at their
next round boundary (all of them within DRAIN_SECONDS); `stop` ends what is left. Without
a host (Flask's test client, `flask run`, the CLI) the engine starts its own loop on the
first request (`ensure_started`) and `close` ends it.
"""

from __future__ import annotations

import asyncio
import logging
import time

from engine.limits import UserLimits
from engine.runtime import Runtime
from engine.store.workers import WorkerRegistry
from engine.turns.service import TurnService
from engine.turns.shared import TurnDeps
from engine.turns.upkeep import Upkeep

log = logging.getLogger(__name__)


class Engine:
    """The turn engine of one worker process (streaming.hosting's Background)."""

    def __init__(
        self,
        runtime: Runtime,
        deps: TurnDeps,
        workers: WorkerRegistry,
        limits: UserLimits | None,
    ) -> None:
        self.runtime, self.deps, self.workers = runtime, deps, workers
        self.service = TurnService(deps, runtime, workers.worker_id, limits, self.ensure_started)
        self.upkeep = Upkeep(self.service, workers)
        self._tasks: list[asyncio.Task[None]] = []
        self._started = self._stopped = False

    async def start(self) -> None:
        """In the host's loop: register this worker, then beat and reap."""
        if self._started:
            return
        self._started = True
        self.runtime.adopt(asyncio.get_running_loop())
        self.runtime.prestart()
        await self.deps.store.until_back(self.workers.register)
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self.upkeep.heartbeat(), name="heartbeat"),
            loop.create_task(self.upkeep.reaper(), name="reaper"),
        ]
        hub = self.deps.tools.hub
        if hub is not None:
            # MCP servers' links run on this loop; their first tool lists join the first turn.
            self._tasks += hub.start()
            await hub.ready()

    @property
    def stopped(self) -> bool:
        """Whether `stop` ran: a stopped engine does not start again."""
        return self._stopped

    def ensure_started(self) -> None:
        """Without a host: start in the engine's own loop, once (every request calls this)."""
        if not self._started:
            self.runtime.run(self.start())

    async def drain(self) -> None:
        """Stop taking turns; let running ones finish; hand the rest over; then retire."""
        if self.deps.worker.draining:
            return
        self.deps.worker.draining = True
        service, t = self.service, self.deps.timings
        deadline = time.monotonic() + t.drain
        # Turns hand over by themselves at their next round boundary.
        while service.turns and time.monotonic() < deadline:
            await asyncio.sleep(min(0.05, t.heartbeat))
        await self._stop_turns("handover", t.graceful_shutdown - t.drain)
        await self._cancel_tasks()
        await self._close_log()
        try:
            await self.deps.store.call(self.workers.retire)
        except Exception as err:
            log.warning("could not retire this worker (%s); others will forget it", err)

    async def stop(self) -> None:
        """End what is left: turns move on quietly, the log and the model client close."""
        self._stopped = True
        await self._cancel_tasks()
        await self._stop_turns("handover", self.deps.timings.heartbeat)
        await self._close_log()
        await self.deps.model.close()

    def close(self) -> None:
        """Without a host: stop the engine and its own loop (tests, the CLI)."""
        if self._started and not self._stopped:
            self.runtime.run(self.stop())
        self.runtime.close()

    async def _stop_turns(self, kind: str, patience: float) -> None:
        turns = list(self.service.turns.values())
        for turn in turns:
            turn.stop(kind)
        tasks = {turn.task for turn in turns if turn.task is not None}
        if tasks:
            _, left = await asyncio.wait(tasks, timeout=max(patience, 0.1))
            for task in left:
                task.cancel()

    async def _cancel_tasks(self) -> None:
        """Cancel the background tasks; wait (briefly) for them, so MCP servers' processes
        and connections close before the loop does."""
        tasks = list(self._tasks)
        if self.deps.tools.hub is not None:
            tasks += self.deps.tools.hub.close()
        for task in tasks:
            task.cancel()
        self._tasks = []
        if tasks:
            await asyncio.wait(tasks, timeout=self.deps.timings.heartbeat)

    async def _close_log(self) -> None:
        try:
            await self.deps.events.close()
        except Exception as err:
            log.warning("closing the event log failed (%s)", err)

"""A worker's upkeep, as two tasks of the engine's loop: its heartbeat and its reaper.

The heartbeat refreshes this worker's row once for all of its turns, then reads the turn
rows it holds in one query: a turn whose lease moved is fenced, a cancel asked through the
database reaches its turn, and a row this worker holds but runs no turn for (a takeover
whose reply was lost with its connection) is released after two beats. The reaper takes
over running turns whose worker stopped beating or let them go (FOR UPDATE SKIP LOCKED:
two reapers never take one turn), but only once the database itself has been reachable
for STALE_TURN_SECONDS: a heartbeat missed while the database was out proves nothing.
"""

from __future__ import annotations

import asyncio
import logging
import time

from engine.store.fence import Lease
from engine.store.workers import WorkerRegistry
from engine.turns.service import TurnService
from telemetry import audit

log = logging.getLogger(__name__)
REAP_BATCH = 16


class Upkeep:
    """The heartbeat and reaper tasks of one worker."""

    def __init__(self, service: TurnService, workers: WorkerRegistry) -> None:
        self.service, self.workers = service, workers
        self.deps, self.timings = service.deps, service.timings
        self._unknown: set[str] = set()  # rows held here with no turn, at the last beat
        self._next_expiry = 0.0

    async def heartbeat(self) -> None:
        """Beat, then reconcile the turns held here with their rows, for ever."""
        failing = False
        while True:
            await asyncio.sleep(self.timings.heartbeat)
            try:
                await self.beat()
            except Exception as err:
                if not failing:
                    log.warning("heartbeat failed (%s); retrying", err)
                failing = True
                continue
            failing = False

    async def beat(self) -> None:
        """One heartbeat and one poll of this worker's turn rows."""
        store, turns = self.deps.store, self.deps.turns
        await store.call(self.workers.beat)
        # Only turns that ran before the poll began: a newer one's row may not show in it.
        before = list(self.service.turns.items())
        held = await store.call(turns.poll_mine, self.workers.worker_id)
        running = self.service.turns
        for turn_id, turn in before:
            state = held.get(turn_id)
            if state is None or state.lease != turn.lease.number:
                turn.stop("fenced")  # taken over, or ended, elsewhere (or its session deleted)
            elif state.cancel_requested:
                turn.stop("cancel")
        unknown = {turn_id for turn_id in held if turn_id not in running}
        for turn_id in unknown & self._unknown:
            log.warning("turn %s is held here with nothing running it; released", turn_id)
            await store.call(turns.release, Lease(turn_id, "", held[turn_id].lease))
        self._unknown = unknown - self._unknown

    async def reaper(self) -> None:
        """Take over orphaned turns, for ever."""
        t = self.timings
        next_forget = 0.0
        while True:
            await asyncio.sleep(t.reaper_interval)
            try:
                await self.reap()
                if time.monotonic() >= next_forget:
                    next_forget = time.monotonic() + t.forget_workers / 10
                    await self.deps.store.call(self.workers.forget_dead, t.forget_workers)
            except Exception as err:
                log.warning("reaper failed (%s); retrying", err)

    async def reap(self) -> None:
        """Take over the running turns whose worker is gone, if the database can tell."""
        t, deps = self.timings, self.deps
        if deps.worker.draining or deps.store.reachable_for() < t.stale_after:
            return
        orphans = await deps.store.call(
            deps.turns.take_orphans, self.workers.worker_id, t.stale_after, REAP_BATCH
        )
        for orphan in orphans:
            audit.record(
                "turn_taken_over",
                turn_id=orphan.turn.turn_id,
                user_id=orphan.user_id,
                worker_id=self.workers.worker_id,
                takeovers=orphan.takeovers,
                traceparent=orphan.turn.traceparent,
            )
            self.service.launch(orphan)
        # Queued turns whose promotion a crash lost (as far as their users' limits let them
        # start), and approvals nobody gave in time.
        for runnable in await deps.store.call(
            deps.turns.stranded, self.workers.worker_id, REAP_BATCH
        ):
            self.service.launch(runnable)
        if time.monotonic() >= self._next_expiry:
            self._next_expiry = time.monotonic() + t.approval_sweep
            expired = await deps.store.call(
                self.service.approvals.expire, t.approval_ttl, self.workers.worker_id
            )
            for turn_id, started in expired.items():
                audit.record("approval_expired", turn_id=turn_id)
                for runnable in started:
                    self.service.launch(runnable)

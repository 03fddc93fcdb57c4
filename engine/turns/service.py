"""The turn service: starts turns, keeps this worker alive, takes over orphans, drains.

Three background threads, none blocked by another: the watchdog (in memory only: stalls
and cancels), the heartbeat (one statement for every turn of this worker, then one query
for cancel flags and leases) and the reaper (takes over turns whose worker died, hung or
handed them over, with FOR UPDATE SKIP LOCKED so two reapers never take one turn).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from config import Timings
from engine.errors import Draining
from engine.events.log import Chunk
from engine.events.reader import EventReader
from engine.limits import UserLimits
from engine.store.fence import Lease
from engine.store.turns import NewTurn
from engine.store.workers import WorkerRegistry
from engine.turns.pacing import Pacer
from engine.turns.runner import TurnDeps, TurnRunner
from models.chat import TURN_RUNNING
from telemetry.metrics import TURN_SECONDS, TURNS_ACTIVE, TURNS_FINISHED, TURNS_STARTED

log = logging.getLogger(__name__)
REAP_BATCH = 16
DB_THREADS = 8
# Rows of workers silent this long, with no running turn, are deleted.
FORGET_WORKERS_AFTER = 3600.0


class TurnService:
    """Owns the running turns of this process."""

    def __init__(
        self,
        deps: TurnDeps,
        timings: Timings,
        workers: WorkerRegistry,
        limits: UserLimits | None = None,
    ) -> None:
        self.deps, self.timings, self.workers, self.limits = deps, timings, workers, limits
        self.events = deps.events
        self.reader = EventReader(deps.events, deps.turns, lambda: self.timings)
        self._runners: dict[str, TurnRunner] = {}
        self._threads: dict[str, threading.Thread] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._draining = threading.Event()
        self._drained = threading.Event()
        self._background: list[threading.Thread] = []
        # Turns whose runner ended without storing the end: handed over by the heartbeat.
        self._unreleased: list[Lease] = []
        deps.draining = self._draining.is_set

    @property
    def worker_id(self) -> str:
        """This worker's id in the workers table."""
        return self.workers.worker_id

    @property
    def draining(self) -> bool:
        """True once this worker is shutting down (no new turns; readers should leave)."""
        return self._draining.is_set()

    def start_background(self) -> None:
        """Register this worker and start its threads (once; the schema must exist)."""
        if self._background:
            return
        with self._lock:
            if self._background or self._stop.is_set():
                return
            self.workers.register()
            for name, target in (
                ("turn-watchdog", self._watch),
                ("turn-heartbeat", self._heartbeat),
                ("turn-reaper", self._reap),
            ):
                thread = threading.Thread(target=_forever(target, name), name=name, daemon=True)
                self._background.append(thread)
                thread.start()

    def start(self, user_id: int, session_id: str | None, text: str) -> NewTurn:
        """Store the user message (new session if None) and start the turn in the background.

        Raises LimitExceeded, writing nothing, when the user is over a limit.
        """
        self.admit(user_id, count_running=False)  # start_turn counts them, under a lock
        self.start_background()
        max_running = self.limits.max_running if self.limits else None
        new, lease = self.deps.turns.start_turn(
            user_id, session_id, text, self.worker_id, max_running
        )
        self.events.open(new.turn_id, lease.number)
        self._launch(TurnRunner(self.deps, new, user_id, lease))
        return new

    def admit(self, user_id: int, count_running: bool = True) -> None:
        """Raise Draining or LimitExceeded if this worker would refuse the user's turn now."""
        if self._draining.is_set():
            raise Draining()
        if self.limits is not None:
            self.limits.admit(user_id, count_running)

    def _launch(self, runner: TurnRunner) -> None:
        turn_id = runner.turn.turn_id
        thread = threading.Thread(target=self._run, args=(runner,), daemon=True, name=turn_id)
        with self._lock:
            self._runners[turn_id], self._threads[turn_id] = runner, thread
        try:
            thread.start()
        except RuntimeError:
            with self._lock:
                self._runners.pop(turn_id, None)
                self._threads.pop(turn_id, None)
            # No thread to be had: let a worker with room take it (the reaper retries).
            self.deps.turns.release(runner.lease)
            log.error("no thread for turn %s; handed over", turn_id)

    def _run(self, runner: TurnRunner) -> None:
        status, started = "crashed", time.monotonic()
        TURNS_STARTED.inc()
        TURNS_ACTIVE.inc()
        try:
            status = runner.run()
        except BaseException:
            runner.unrecorded = True
            raise
        finally:
            TURNS_ACTIVE.dec()
            TURNS_FINISHED.labels(status).inc()
            TURN_SECONDS.observe(time.monotonic() - started)
            if runner.unrecorded:
                with self._lock:
                    self._unreleased.append(runner.lease)
            with self._lock:
                self._runners.pop(runner.turn.turn_id, None)
                self._threads.pop(runner.turn.turn_id, None)

    def cancel(self, turn_id: str) -> None:
        """Stop a running turn, here or (through the database flag) in another worker."""
        with self._lock:
            runner = self._runners.get(turn_id)
        if runner is not None:
            runner.cancel()
        else:
            self.deps.turns.request_cancel(turn_id)

    def attach_loop(self, loop: asyncio.AbstractEventLoop) -> None:
        """Stream model calls and serve readers in this event loop (the ASGI server's).

        Called from the loop's own thread. Database writes the streams need go to a small
        pool of threads, so a slow database never stalls the loop.
        """
        self.deps.loop = loop
        self.deps.db_pool = ThreadPoolExecutor(max_workers=DB_THREADS, thread_name_prefix="db")
        self.deps.pacer = Pacer(loop, lambda: self.timings.stream_batch)
        attach = getattr(self.events, "attach", None)
        if attach is not None:
            attach(loop, threading.get_ident())

    async def aread(
        self, turn_id: str, after: int, timeout: float, check_store: bool = True
    ) -> Chunk:
        """`read` for a reader in the event loop: never blocks it."""
        return await self.reader.aread(turn_id, after, timeout, check_store, self.deps.db_pool)

    def read(self, turn_id: str, after: int, timeout: float, check_store: bool = True) -> Chunk:
        """Return events after `after`: live from the log, else archived, else rebuilt."""
        return self.reader.read(turn_id, after, timeout, check_store)

    def wait(self, turn_id: str, timeout: float = 30.0) -> bool:
        """Block until the turn's thread here ends (for tests and shutdown); True if it did."""
        with self._lock:
            thread = self._threads.get(turn_id)
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive()
        return True

    def running(self) -> list[str]:
        """Return the ids of turns running in this process."""
        with self._lock:
            return list(self._runners)

    def _watch(self) -> None:
        """Abort stalled or cancelled model calls (in memory: never waits on the database)."""
        while not self._stop.wait(self.timings.watch_interval):
            t, now = self.timings, time.monotonic()
            for runner in self._snapshot():
                runner.watch(now, t.stall_timeout, t.first_token_timeout)

    def _heartbeat(self) -> None:
        """Beat for all of this worker's turns at once, then poll their cancels and leases."""
        next_beat = 0.0
        while not self._stop.wait(min(self.timings.heartbeat, self.timings.cancel_poll)):
            if time.monotonic() >= next_beat:
                next_beat = time.monotonic() + self.timings.heartbeat
                self.workers.beat()
            runners = self._snapshot()
            if runners:
                self._poll(runners)
            self._hand_over_unrecorded()

    def _poll(self, runners: list[TurnRunner]) -> None:
        states = self.deps.turns.poll([r.turn.turn_id for r in runners])
        for runner in runners:
            state = states.get(runner.turn.turn_id)
            if state is None or state.lease != runner.lease.number or state.status != TURN_RUNNING:
                runner.fence()  # taken over, or ended, elsewhere (or its session deleted)
            elif state.cancel_requested:
                runner.cancel()

    def _hand_over_unrecorded(self) -> None:
        with self._lock:
            leases, self._unreleased = self._unreleased, []
        for index, lease in enumerate(leases):
            try:
                self.deps.turns.release(lease)
            except Exception:
                log.exception("could not hand over turn %s; retrying", lease.turn_id)
                with self._lock:
                    self._unreleased += leases[index:]
                return

    def _reap(self) -> None:
        """Take over turns whose worker is gone, and turns of ours that lost their runner."""
        next_forget = 0.0
        while not self._stop.is_set():
            t = self.timings
            if not self._draining.is_set():
                for orphan in self.deps.turns.take_orphans(
                    self.worker_id, t.stale_after, REAP_BATCH
                ):
                    runner = TurnRunner(
                        self.deps,
                        orphan.turn,
                        orphan.user_id,
                        orphan.lease,
                        orphan.takeovers,
                        orphan.stalls,
                    )
                    self._launch(runner)
            if time.monotonic() >= next_forget:
                next_forget = time.monotonic() + FORGET_WORKERS_AFTER / 10
                self.workers.forget_dead(FORGET_WORKERS_AFTER)
            self._stop.wait(t.reaper_interval)

    def _snapshot(self) -> list[TurnRunner]:
        with self._lock:
            return list(self._runners.values())

    def drain(self, timeout: float | None = None) -> None:
        """Stop taking turns; let running ones finish, hand the rest over; then retire."""
        if self._draining.is_set():
            self._drained.wait(timeout)
            return
        self._draining.set()
        deadline = time.monotonic() + (self.timings.drain if timeout is None else timeout)
        try:
            # Runners hand over by themselves at their next round boundary.
            while self.running() and time.monotonic() < deadline:
                time.sleep(0.05)
            for runner in self._snapshot():
                runner.hand_over()
            for turn_id in self.running():
                self.wait(turn_id, 5.0)
            self._stop.set()
            self.events.close()
            if self._background:
                self.workers.retire()
        except Exception:
            log.exception("draining this worker failed; its turns go to the reaper")
        finally:
            self._drained.set()

    def shutdown(self, timeout: float = 10.0) -> None:
        """Cancel running turns and stop (tests and embedded use; servers drain instead)."""
        self._stop.set()
        for runner in self._snapshot():
            runner.cancel()
        for turn_id in self.running():
            self.wait(turn_id, timeout)
        self.events.close()


def _forever(loop: Callable[[], None], name: str) -> Callable[[], None]:
    """Run a background loop again after any failure (a database outage must not kill it)."""

    def run() -> None:
        while True:
            try:
                loop()
                return
            except Exception:
                log.exception("%s failed; restarting it", name)
                time.sleep(1.0)

    return run

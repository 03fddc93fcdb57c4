"""The turns of this worker: start, cancel, wait for and follow them.

Every turn is a task of the engine's loop (engine/runtime.py). Flask views call the plain
methods here from their own threads: a turn's rows are written in the view's thread (its
errors are the request's), and the turn itself is launched in the loop.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import replace
from functools import partial

from domain.errors import Draining
from engine.events.follow import Guard, follow
from engine.events.log import Chunk
from engine.events.reader import EventReader
from engine.limits import UserLimits
from engine.runtime import Runtime
from engine.store.approvals import ApprovalStore, Decision
from engine.store.starts import Ask
from engine.store.turn_rows import Runnable, Started
from engine.turns.shared import TurnDeps
from engine.turns.turn import Turn
from streaming.hosting import BodyFactory
from streaming.shapes import Shape
from telemetry import audit, tracing
from telemetry.metrics import TURN_SECONDS, TURNS_ACTIVE, TURNS_FINISHED, TURNS_STARTED

log = logging.getLogger(__name__)


class TurnService:
    """Owns the running turns of this process."""

    def __init__(
        self,
        deps: TurnDeps,
        runtime: Runtime,
        worker_id: str,
        limits: UserLimits | None,
        ready: Callable[[], None],
    ) -> None:
        self.deps, self.runtime, self.worker_id, self.limits = deps, runtime, worker_id, limits
        # Starts the engine if no host did (its worker row must exist before a turn's).
        self.ready = ready
        self.timings = deps.timings
        self.reader = EventReader(deps.events, deps.turns, deps.store, deps.timings)
        self.approvals = ApprovalStore(deps.turns.db, deps.turns.admission)
        self.turns: dict[str, Turn] = {}  # only the loop changes it

    @property
    def draining(self) -> bool:
        """True once this worker is shutting down (no new turns; readers should leave)."""
        return self.deps.worker.draining

    # From a view's thread.

    def start(self, user_id: int, session_id: str | None, ask: Ask | str) -> Started:
        """Store the question (new session if None) and start its turn in the loop, or queue it.

        A queued turn starts when the running one ends (an `interrupt` one first, as soon as
        the running one stopped). Raises LimitExceeded, writing nothing, when the user is over
        a limit (start_turn asks the admission, under the user's lock).
        """
        if isinstance(ask, str):
            ask = Ask(ask)
        if ask.if_busy is None:
            ask = replace(ask, if_busy=self.deps.busy_policy)
        if self.draining:
            raise Draining()
        if self.limits is not None:
            self.limits.test_rate(user_id)  # a quick refusal before any write
        self.ready()
        new, lease, placed = self.deps.turns.start_turn(
            user_id,
            session_id,
            ask,
            self.worker_id,
            self.deps.max_queued,
            self._counter(user_id),
            tracing.traceparent(),
        )
        if not placed.queued and placed.replay_of is None:  # a replay's turn runs, or ran
            self.runtime.call_soon(self.launch, Runnable(new, user_id, lease))
        elif placed.interrupted is not None:
            self.cancel(placed.interrupted)
        return Started(
            new.turn_id,
            new.session_id,
            new.user_message_id,
            new.continues,
            new.traceparent,
            placed.queued,
            placed.interrupted,
        )

    def decide(
        self,
        user_id: int,
        turn_id: str,
        tool_use_id: str,
        approved: bool,
        reason: str | None,
        always: bool = False,
    ) -> Decision:
        """Approve or decline a paused turn's call; once all are decided, its turn goes on
        (now, or `queued` for a place). Raises LimitExceeded, writing nothing, when the
        decision would start model work while the user is over the day's tokens or the rate.
        """
        self.ready()
        decision = self.approvals.decide(
            user_id,
            turn_id,
            tool_use_id,
            approved,
            reason,
            self.worker_id,
            self._counter(user_id),
            always,
        )
        if decision.changed:  # the same decision again records nothing new
            audit.record(
                "approval_decided",
                turn_id=turn_id,
                tool_use_id=tool_use_id,
                tool=decision.run["name"],
                approval=decision.run["approval"],
                always=always and approved,
                continuation_turn_id=decision.continuation,
            )
        for started in decision.started:
            self.runtime.call_soon(self.launch, started)
        return decision

    def admit(self, user_id: int, count_running: bool = True) -> None:
        """Raise Draining or LimitExceeded if this worker would refuse the user's turn now."""
        if self.draining:
            raise Draining()
        if self.limits is not None:
            self.limits.admit(user_id, count_running)

    def _counter(self, user_id: int) -> Callable[[], None] | None:
        """What counts a start against the user's rate, once nothing else refused it."""
        return partial(self.limits.count_start, user_id) if self.limits is not None else None

    def cancel(self, turn_id: str) -> None:
        """Stop a running turn, here or (through the database flag) in another worker."""
        self.runtime.run(self._cancel(turn_id))

    def wait(self, turn_id: str, timeout: float = 30.0) -> bool:
        """Block until the turn ends here (tests, deleting a session); True if it did."""
        return self.runtime.run(self._wait(turn_id, timeout))

    def peek(self, turn_id: str, after: int) -> Chunk:
        """The turn's events after `after` now, without waiting (for a route's answer)."""
        return self.runtime.run(self.reader.read(turn_id, after, 0, check_store=True))

    def follow(
        self,
        turn_id: str,
        after: int,
        shape: Shape,
        guard: Guard | None = None,
        on_end: Callable[[], None] | None = None,
    ) -> BodyFactory:
        """The turn's event stream after `after`, ended early once `guard` refuses it."""
        worker = self.deps.worker
        return partial(
            follow,
            self.reader,
            self.timings,
            turn_id,
            after,
            shape,
            lambda: worker.draining,
            guard,
            on_end,
        )

    # In the loop.

    def launch(self, run: Runnable) -> Turn:
        """Run a turn as a task of this loop (a new one, or one taken over)."""
        new, lease = run.turn, run.lease
        turn = Turn(
            self.deps, new, run.user_id, lease, run.takeovers, run.stalls, self.worker_id, run.epoch
        )
        if not run.takeovers:
            self.deps.events.open(new.turn_id, lease.number)
        self.turns[new.turn_id] = turn
        turn.task = asyncio.get_running_loop().create_task(self._run(turn))
        return turn

    async def _run(self, turn: Turn) -> str:
        status, started = "crashed", time.monotonic()
        TURNS_STARTED.inc()
        TURNS_ACTIVE.inc()
        try:
            new = turn.turn
            with tracing.turn_span(
                new.turn_id, new.session_id, new.traceparent, turn.takeovers
            ) as span:
                status = await turn.run()
                tracing.turn_ended(span, status)
        finally:
            TURNS_ACTIVE.dec()
            TURNS_FINISHED.labels(status).inc()
            TURN_SECONDS.observe(time.monotonic() - started)
            self.turns.pop(turn.turn.turn_id, None)
            for successor in turn.successors:
                self._launch_here(successor)
        return status

    def _launch_here(self, run: Runnable) -> None:
        """Run a turn this worker was given, unless it drains (then any worker takes it)."""
        if self.draining:
            self.runtime.call_soon(self._hand_over, run)
        else:
            self.launch(run)

    def _hand_over(self, run: Runnable) -> None:
        asyncio.get_running_loop().create_task(
            self.deps.store.durable(self.deps.turns.release, run.lease)
        )

    async def _cancel(self, turn_id: str) -> None:
        turn = self.turns.get(turn_id)
        if turn is not None:
            turn.stop("cancel")
        elif not await self.deps.store.call(self.deps.turns.cancel_queued, turn_id):
            await self.deps.store.call(self.deps.turns.request_cancel, turn_id)

    async def _wait(self, turn_id: str, timeout: float) -> bool:
        turn = self.turns.get(turn_id)
        if turn is None or turn.task is None:
            return True
        done, _ = await asyncio.wait({turn.task}, timeout=timeout)
        return bool(done)

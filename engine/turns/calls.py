"""Model calls of a turn: attempts with retries, and the abort the watchdog triggers."""

from __future__ import annotations

import logging
import random
import threading
from typing import TYPE_CHECKING, Any

from engine.errors import LeaseLost, TurnCancelled, TurnFailed, UpstreamInterrupted
from engine.store.fence import Lease
from engine.turns.attempt import LoopCall, run_in_loop
from engine.turns.round import Emit, MessageRound, RoundResult
from engine.turns.tool_ids import tool_ids
from engine.upstream.context import Plan
from engine.upstream.retry import Failure, classify
from engine.upstream.thread_call import CallAborted, UpstreamCall
from streaming import protocol as P
from telemetry.metrics import UPSTREAM_RETRIES

if TYPE_CHECKING:
    from engine.turns.runner import TurnDeps

log = logging.getLogger(__name__)


class ModelCalls:
    """Streams one model message per round, retrying failed attempts within the policy."""

    def __init__(self, deps: TurnDeps, turn_id: str, cancelled: threading.Event) -> None:
        self.deps, self.turn_id, self.cancelled = deps, turn_id, cancelled
        # Read by the watchdog thread: the attempt in flight, if any.
        self.current: MessageRound | None = None
        self.call: UpstreamCall | LoopCall | None = None
        self.unsettled: dict[str, dict[str, Any]] = {}
        # What the last call of this turn left out, once one was made: (turns, notes).
        self.trimmed: tuple[int, int] | None = None
        self._rng = random.Random()

    def stream(self, history: list[dict[str, Any]], emit: Emit, lease: Lease) -> RoundResult:
        """Call the model until one attempt yields a whole message, or retries run out.

        Only time spent waiting between attempts counts against the retry budget: a stall
        noticed after a minute, or a long stream that breaks late, is still retried.
        """
        policy, waited, attempt = self.deps.retry, 0.0, 0
        used = tool_ids(history)
        window, tools, refitted = self.deps.window, self.deps.tool_definitions, False
        while True:
            if self.cancelled.is_set():
                raise TurnCancelled()
            fit = window.fit(lease.session_id, history, tools)
            self._announce(fit.plan, history, emit)
            self.current = current = MessageRound(
                self.deps.messages, emit, lease, self.cancelled, used
            )
            try:
                result = self._attempt(fit.plan.messages, tools, current)
                self.call = None
                self.current = None
                self.unsettled.update(current.unsettled)
                window.observe(lease.session_id, fit, result.usage)
                return result
            except (TurnCancelled, LeaseLost):
                raise
            except Exception as err:
                call, self.call = self.call, None
                if self.cancelled.is_set():
                    raise TurnCancelled() from err
                failure = classify(_unwrap(err), call.abort_reason if call else None)
                current.discard(failure.code, attempt)
                self.unsettled.update(current.unsettled)
                self.current = None
                if failure.too_long and not refitted:
                    # Once per round: trim by what the API counted, then call again at once.
                    refitted = True
                    window.refused(lease.session_id, fit, *failure.too_long)
                    if window.fit(lease.session_id, history, tools).estimate < fit.estimate:
                        log.warning("turn %s: prompt too long, trimmed further", self.turn_id)
                        continue
                wait = policy.delay(attempt, failure.retry_after, self._rng)
                if not failure.retryable or not policy.allows(attempt, waited, wait):
                    raise TurnFailed(failure.code, _final_message(failure, attempt)) from err
                log.warning(
                    "turn %s: model call failed (%s), retry %d in %.2fs",
                    self.turn_id,
                    failure.code,
                    attempt + 1,
                    wait,
                )
                UPSTREAM_RETRIES.labels(failure.code).inc()
                if self.cancelled.wait(wait):
                    raise TurnCancelled() from err
                waited += wait
                attempt += 1

    def _attempt(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], current: MessageRound
    ) -> RoundResult:
        """One model call: in the event loop when one runs the engine, else in this thread."""
        loop, model = self.deps.loop, self.deps.model
        if loop is not None and getattr(model, "streams_in_loop", False):
            self.call = call = LoopCall(loop)
            return run_in_loop(
                model, messages, tools, current, call, self.deps.db_pool, self.deps.pacer
            )
        self.call = thread_call = UpstreamCall()
        with model.stream(messages, tools, thread_call):
            return current.consume(thread_call.events())

    def _announce(self, plan: Plan, history: list[dict[str, Any]], emit: Emit) -> None:
        """Tell clients when a call leaves out more than the call before it did."""
        state = (plan.omitted_turns, plan.elided_results)
        before = self.trimmed if self.trimmed is not None else (None if plan.changed else state)
        self.trimmed = state
        if state == before:
            return
        first = history[plan.first_kept] if plan.first_kept < len(history) else {}
        emit(
            P.CONTEXT_TRIMMED,
            {
                "omitted_turns": plan.omitted_turns,
                "omitted_messages": plan.omitted_messages,
                "elided_results": plan.elided_results,
                "first_kept_message_id": first.get("id"),
            },
        )

    def abort(self) -> None:
        """Break the model call in flight, if any (cancel, hand-over, fence)."""
        call = self.call
        if call is not None:
            call.abort("cancelled")

    def take_open(self) -> MessageRound | None:
        """Return the attempt left open (the turn is ending) and forget it."""
        current, self.current = self.current, None
        return current

    def watch(self, now: float, stall: float, first_token: float) -> None:
        """Called by the watchdog thread: abort a cancelled or stalled model call."""
        call, current = self.call, self.current
        if call is None or current is None:
            return
        if self.cancelled.is_set():
            call.abort("cancelled")
            return
        gap = now - current.last_activity
        if gap > (stall if current.saw_content else first_token):
            log.warning(
                "turn %s: no model event for %.1fs, aborting the attempt", self.turn_id, gap
            )
            call.abort("stall")


def _unwrap(err: Exception) -> Exception:
    if isinstance(err, CallAborted) and err.reason == "stall":
        return UpstreamInterrupted("stalled", "The model did not start answering in time.")
    return err


def _final_message(failure: Failure, attempt: int) -> str:
    if not failure.retryable:
        return failure.message
    tries = f"{attempt + 1} attempt{'s' if attempt else ''}"
    return f"{failure.message} Gave up after {tries}; what was completed is saved. Try again."

"""One turn: call the model, run its tools, and call it again until it stops."""

from __future__ import annotations

import logging
import random
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from engine.errors import TurnCancelled, TurnFailed, UpstreamInterrupted
from engine.eventlog import EventLog
from engine.model_client import CallAborted, ModelClient, UpstreamCall
from engine.retry import Failure, RetryPolicy, classify
from engine.round import MessageRound, RoundResult
from engine.store import NewTurn, TurnStore
from engine.tool_exec import ToolExecutor, result_block, tool_calls
from models import new_id
from streaming import protocol as P
from streaming.history import repair_history, validate_history

log = logging.getLogger(__name__)

TRUNCATED = {
    "max_tokens": "The reply was cut off at the output token limit; ask for a shorter answer.",
    "model_context_window_exceeded": "The conversation no longer fits the model's context "
    "window; start a new session.",
}


@dataclass
class TurnDeps:
    """What every turn needs, shared across turns."""

    store: TurnStore
    events: EventLog
    model: ModelClient
    tools: ToolExecutor
    tool_definitions: list[dict[str, Any]]
    max_rounds: int
    retry: RetryPolicy = field(default_factory=RetryPolicy)


class TurnRunner:
    """Runs one turn to an end state; every started block and message is ended."""

    def __init__(self, deps: TurnDeps, turn: NewTurn, user_id: int) -> None:
        self.deps, self.turn, self.user_id = deps, turn, user_id
        self.cancelled = threading.Event()
        self.rounds = 0
        self._round: MessageRound | None = None
        self._call: UpstreamCall | None = None
        self._rng = random.Random()

    def emit(self, event_type: str, data: dict[str, Any]) -> int:
        """Append one client event to this turn's log."""
        return self.deps.events.append(self.turn.turn_id, event_type, data)

    def cancel(self) -> None:
        """Stop the turn: at its next event, or at once if it is waiting on the model."""
        self.cancelled.set()
        call = self._call
        if call is not None:
            call.abort("cancelled")

    def run(self) -> str:
        """Run the turn and return its final status; the end events are always sent."""
        turn = self.turn
        status, error = "failed", ("internal_error", "The turn failed on our side.")
        try:
            self.emit(
                P.TURN_START,
                {
                    "turn_id": turn.turn_id,
                    "session_id": turn.session_id,
                    "user_message_id": turn.user_message_id,
                },
            )
            status, error = self._loop(), None
        except TurnCancelled:
            status, error = "cancelled", None
        except TurnFailed as err:
            error = (err.code, err.message)
        except Exception:
            log.exception("turn %s crashed", turn.turn_id)
        finally:
            self._close(status, error)
        return status

    def _loop(self) -> str:
        history = self.deps.store.history(self.turn.session_id)
        continuing = False
        while self.rounds < self.deps.max_rounds:
            self._check_cancel()
            self.rounds += 1
            # Repair drops what the API refuses (e.g. whitespace-only text before a tool call)
            # and merges a pause_turn continuation into the message it continues.
            history = repair_history(history)
            problems = validate_history(history, expect_user_last=not continuing)
            if problems:
                raise TurnFailed("invalid_history", "; ".join(problems))
            result = self._stream_round(history)
            history.append({"role": "assistant", "content": result.content})
            stop = result.stop_reason
            continuing = stop == "pause_turn"
            if stop == "tool_use":
                answer = self._answer_tools(result, None)
                if answer is None:
                    return "completed"
                history.append(answer)
            elif stop in TRUNCATED:
                self._answer_tools(result, f"The tool was not run: the reply stopped ({stop}).")
                raise TurnFailed(stop, TRUNCATED[stop])
            elif stop == "refusal":
                self.emit(
                    P.ERROR,
                    {"code": "refusal", "message": "The model declined to answer this request."},
                )
                return "completed"
            elif not continuing:
                return "completed"
        return "max_rounds"

    def _check_cancel(self) -> None:
        if self.cancelled.is_set():
            raise TurnCancelled()

    def _stream_round(self, history: list[dict[str, Any]]) -> RoundResult:
        """Call the model until one attempt yields a whole message, or retries run out."""
        policy, started, attempt = self.deps.retry, time.monotonic(), 0
        while True:
            self._check_cancel()
            self._round = current = MessageRound(
                self.deps.store, self.emit, self.turn.turn_id, self.turn.session_id, self.cancelled
            )
            self._call = call = UpstreamCall()
            try:
                with self.deps.model.stream(history, self.deps.tool_definitions, call):
                    result = current.consume(call.events())
                    self._call = None
                self._round = None
                return result
            except TurnCancelled:
                raise
            except Exception as err:
                self._call = None
                if self.cancelled.is_set():
                    raise TurnCancelled() from err
                failure = classify(_unwrap(err), call.abort_reason)
                current.discard(failure.code, attempt)
                self._round = None
                wait = policy.delay(attempt, failure.retry_after, self._rng)
                if not failure.retryable or not policy.allows(attempt, started, wait):
                    raise TurnFailed(failure.code, _final_message(failure, attempt)) from err
                log.warning(
                    "turn %s: model call failed (%s), retry %d in %.2fs",
                    self.turn.turn_id,
                    failure.code,
                    attempt + 1,
                    wait,
                )
                if self.cancelled.wait(wait):
                    raise TurnCancelled() from err
                attempt += 1

    def watch(self, now: float, stall: float, first_token: float) -> None:
        """Called by the watchdog thread: abort a cancelled or stalled model call."""
        call, current = self._call, self._round
        if call is None or current is None:
            return
        if self.cancelled.is_set():
            call.abort("cancelled")
            return
        gap = now - current.last_activity
        if gap > (stall if current.saw_content else first_token):
            log.warning(
                "turn %s: no model event for %.1fs, aborting the attempt", self.turn.turn_id, gap
            )
            call.abort("stall")

    def _answer_tools(self, result: RoundResult, refuse: str | None) -> dict[str, Any] | None:
        """Run (or refuse) every tool_use of `result`; store and emit one results message."""
        calls = tool_calls(result.content, result.tool_errors, refuse)
        if not calls:
            return None
        runs = self.deps.tools.run_all(
            self.turn.turn_id, self.turn.session_id, self.user_id, calls, self.cancelled
        )
        blocks = [result_block(run) for run in runs]
        message_id = new_id("msg")
        self.deps.store.add_message(
            self.turn.turn_id, self.turn.session_id, message_id, "user", blocks, "complete"
        )
        for run, block in zip(runs, blocks, strict=True):
            self.emit(
                P.TOOL_RESULT,
                {
                    "message_id": message_id,
                    "tool_use_id": run.tool_use_id,
                    "name": run.name,
                    "is_error": run.is_error,
                    "content": block["content"],
                },
            )
        return {"role": "user", "content": blocks}

    def fail_to_start(self) -> None:
        """End a turn whose thread could not start, with the events a client expects."""
        self.emit(
            P.TURN_START,
            {
                "turn_id": self.turn.turn_id,
                "session_id": self.turn.session_id,
                "user_message_id": self.turn.user_message_id,
            },
        )
        self._close("failed", ("overloaded", "The server is too busy to start a turn; retry."))

    def _close(self, status: str, error: tuple[str, str] | None) -> None:
        """End what is open, record the outcome and end the event log, whatever fails."""
        turn_id, store, events = self.turn.turn_id, self.deps.store, self.deps.events
        current, self._round = self._round, None
        steps = [
            lambda: current and current.abort("cancelled" if status == "cancelled" else "error"),
            lambda: error and self.emit(P.ERROR, {"code": error[0], "message": error[1]}),
            lambda: store.finish_turn(turn_id, status, self.rounds, error),
        ]
        for step in steps:
            try:
                step()
            except Exception:
                log.exception("ending turn %s: a step failed; going on", turn_id)
        seq = self.emit(P.TURN_END, {"turn_id": turn_id, "status": status})
        frames = events.finish(turn_id)
        try:
            store.archive_events(turn_id, frames, seq)
        except Exception:
            log.exception("could not archive the events of turn %s", turn_id)


def _unwrap(err: Exception) -> Exception:
    if isinstance(err, CallAborted):
        if err.reason == "stall":
            return UpstreamInterrupted("stalled", "The model did not start answering in time.")
        return err
    return err


def _final_message(failure: Failure, attempt: int) -> str:
    if not failure.retryable:
        return failure.message
    tries = f"{attempt + 1} attempt{'s' if attempt else ''}"
    return f"{failure.message} Gave up after {tries}; what was completed is saved. Try again."

"""One turn: call the model, run its tools, and call it again until it stops.

A runner holds the turn's lease. A fresh turn starts with turn_start; a turn taken over
from a dead worker first sends what clients missed (engine/turns/resume.py) and goes on
from the stored rows. When the lease is lost, or the turn is handed over at shutdown, the
runner stops quietly: no more events or writes, the next holder ends the turn.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any

from engine.errors import EndedElsewhere, LeaseLost, TurnCancelled, TurnFailed
from engine.events.log import EventLog
from engine.store.fence import Lease
from engine.store.messages import MessageStore
from engine.store.turns import NewTurn, TurnStore
from engine.turns import resume
from engine.turns.calls import ModelCalls
from engine.turns.closing import close_turn, record_end
from engine.turns.pacing import Pacer
from engine.turns.round import RoundResult
from engine.turns.tool_exec import ToolExecutor, result_block, tool_calls
from engine.turns.window import ContextWindow
from engine.upstream.client import ModelClient
from engine.upstream.retry import RetryPolicy
from models import new_id
from streaming import protocol as P
from streaming.history import repair_history, validate_history
from streaming.view import view_of
from telemetry.metrics import EVENTS

log = logging.getLogger(__name__)

TRUNCATED = {
    "max_tokens": "The reply was cut off at the output token limit; ask for a shorter answer.",
    "model_context_window_exceeded": "The reply ran out of room in the model's context "
    "window; ask again (the oldest turns are left out of the model's view as needed).",
}
QUIET = ("handover", "fenced")
# Events counted per metric update: /metrics lags a running turn by at most this many.
EVENT_BATCH = 64
REFUSAL = "The model declined to answer this request."


@dataclass
class TurnDeps:
    """What every turn needs, shared across turns."""

    turns: TurnStore
    messages: MessageStore
    events: EventLog
    model: ModelClient
    tools: ToolExecutor
    tool_definitions: list[dict[str, Any]]
    max_rounds: int
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    max_takeovers: int = 3
    draining: Callable[[], bool] = lambda: False
    # Set when an event loop (the ASGI server's) streams the model calls; else threads do.
    loop: asyncio.AbstractEventLoop | None = None
    db_pool: Executor | None = None
    pacer: Pacer | None = None
    window: ContextWindow = field(default_factory=ContextWindow)


class TurnRunner:
    """Runs one turn to an end state, or stops quietly when another worker must end it."""

    def __init__(
        self,
        deps: TurnDeps,
        turn: NewTurn,
        user_id: int,
        lease: Lease,
        takeovers: int = 0,
        stalls: int = 0,
    ) -> None:
        self.deps, self.turn, self.user_id, self.lease = deps, turn, user_id, lease
        self.takeovers, self.stalls = takeovers, stalls
        self.cancelled = threading.Event()
        self.stop_kind: str | None = None
        # Set when the end could not be stored: the service hands the turn over.
        self.unrecorded = False
        self.rounds = 0
        self.calls = ModelCalls(deps, turn.turn_id, self.cancelled)
        self._shown_errors: set[str] = set()
        self._unreported = 0

    def emit(self, event_type: str, data: dict[str, Any]) -> int:
        """Append one client event to this turn's log."""
        # Counted in batches (a shared-memory counter costs a lock and a getpid per call),
        # and in full before the last event, so a client that saw the end sees the count.
        self._unreported += 1
        if self._unreported >= EVENT_BATCH or event_type == P.TURN_END:
            self._report_events()
        return self.deps.events.append(self.turn.turn_id, event_type, data, self.lease.number)

    def cancel(self) -> None:
        """Stop the turn (the client asked): at its next event, or at once if waiting."""
        self._stop("cancel")

    def hand_over(self) -> None:
        """Stop quietly so another worker takes the turn over (this one is shutting down)."""
        self._stop("handover")

    def fence(self) -> None:
        """Stop quietly: the turn's lease moved to another worker."""
        self._stop("fenced")

    def _stop(self, kind: str) -> None:
        if self.stop_kind is None:
            self.stop_kind = kind
        self.cancelled.set()
        self.calls.abort()

    def quiet(self) -> bool:
        """True once the turn must end without a word (handed over or fenced out)."""
        return self.stop_kind in QUIET

    def run(self) -> str:
        """Run the turn and return its final status; the end events are always sent."""
        try:
            return self._run()
        finally:
            self._report_events()

    def _report_events(self) -> None:
        count, self._unreported = self._unreported, 0
        if count:
            EVENTS.inc(count)

    def _run(self) -> str:
        status, error = "failed", ("internal_error", "The turn failed on our side.")
        try:
            history, stop = self._begin()
            status, error = self._loop(history, stop), None
        except TurnCancelled:
            status, error = "cancelled", None
        except LeaseLost:
            self.stop_kind = self.stop_kind if self.quiet() else "fenced"
        except TurnFailed as err:
            status = "interrupted" if err.code == resume.WORKER_LOST else status
            error = (err.code, err.message)
        except EndedElsewhere as ended:
            return self._end_elsewhere(ended.status, ended.error)
        except Exception:
            log.exception("turn %s crashed", self.turn.turn_id)
        if self.quiet():
            return self._leave()
        try:
            close_turn(self, status, error)
        except LeaseLost:
            self.stop_kind = "fenced"
            return self._leave()
        return status

    def _begin(self) -> tuple[list[dict[str, Any]], str | None]:
        """Announce the turn, or catch clients up after a takeover; return where it stands."""
        start = {
            "turn_id": self.turn.turn_id,
            "session_id": self.turn.session_id,
            "user_message_id": self.turn.user_message_id,
        }
        if not self.takeovers:
            self.emit(P.TURN_START, start)
            return self.deps.messages.history(self.turn.session_id), None
        view = view_of(self.deps.events.takeover(self.turn.turn_id, self.lease.number))
        if view.status is not None:
            raise EndedElsewhere(view.status, view.errors[-1] if view.errors else None)
        self._shown_errors = {code for code, _ in view.errors}
        rows = self.deps.messages.turn_messages(self.turn.turn_id)
        for event_type, data in resume.catch_up(view, rows, start):
            self.emit(event_type, data)
        self.deps.messages.discard_streaming(self.lease)
        standing = resume.standing(rows)
        self.rounds = standing.rounds
        if self.stalls > self.deps.max_takeovers:
            raise TurnFailed(
                resume.WORKER_LOST,
                f"The servers running this turn stopped {self.stalls} times in a row without "
                "getting further; it was ended to protect the others. What was completed is "
                "saved; ask again.",
            )
        log.warning("turn %s: taken over (takeover %d)", self.turn.turn_id, self.takeovers)
        # Unrepaired: a stored tool call whose results were not stored yet must be answered
        # by its tools (or their claims), not by the synthetic results repair would add.
        return self.deps.messages.conversation(self.turn.session_id), standing.stop_reason

    def _loop(self, history: list[dict[str, Any]], stop: str | None) -> str:
        tool_errors: dict[str, str] = {}
        while True:
            if history and history[-1]["role"] == "assistant":
                outcome = self._after_message(history[-1]["content"], stop, tool_errors)
                if isinstance(outcome, str):
                    return outcome
                if outcome is not None:
                    history.append(outcome)
            if self.rounds >= self.deps.max_rounds:
                return "max_rounds"
            self._check_cancel()
            if self.deps.draining():
                # Between rounds nothing is in flight: the cheapest moment to hand over.
                self.hand_over()
                raise TurnCancelled()
            self.rounds += 1
            # Repair drops what the API refuses (e.g. whitespace-only text before a tool call)
            # and merges a pause_turn continuation into the message it continues.
            history = repair_history(history)
            problems = validate_history(history, expect_user_last=stop != "pause_turn")
            if problems:
                raise TurnFailed("invalid_history", "; ".join(problems))
            result = self._stream_round(history)
            history.append(
                {"role": "assistant", "content": result.content, "id": result.message_id}
            )
            stop, tool_errors = result.stop_reason, result.tool_errors

    def _after_message(
        self, content: list[dict[str, Any]], stop: str | None, tool_errors: dict[str, str]
    ) -> str | dict[str, Any] | None:
        """Act on a finished assistant message: a final status, tool results, or go on."""
        if stop == "tool_use":
            answer = self._answer_tools(content, tool_errors, None)
            return "completed" if answer is None else answer
        if stop in TRUNCATED:
            refusal = f"The tool was not run: the reply stopped ({stop})."
            self._answer_tools(content, tool_errors, refusal)
            raise TurnFailed(stop, TRUNCATED[stop])
        if stop == "refusal":
            if "refusal" not in self._shown_errors:
                self.emit(P.ERROR, {"code": "refusal", "message": REFUSAL})
            return "completed"
        return None if stop == "pause_turn" else "completed"

    def _check_cancel(self) -> None:
        if self.cancelled.is_set():
            raise TurnCancelled()

    def _stream_round(self, history: list[dict[str, Any]]) -> RoundResult:
        """Call the model until one attempt yields a whole message, or retries run out."""
        return self.calls.stream(history, self.emit, self.lease)

    def watch(self, now: float, stall: float, first_token: float) -> None:
        """Called by the watchdog thread: abort a cancelled or stalled model call."""
        self.calls.watch(now, stall, first_token)

    def _answer_tools(
        self, content: list[dict[str, Any]], errors: dict[str, str], refuse: str | None
    ) -> dict[str, Any] | None:
        """Run (or refuse) every tool_use of a message; store and emit one results message."""
        calls = tool_calls(content, errors, refuse)
        if not calls:
            return None
        runs = self.deps.tools.run_all(self.lease, self.user_id, calls, self.cancelled, self.quiet)
        blocks = [result_block(run) for run in runs]
        message_id = new_id("msg")
        self.deps.messages.add_message(self.lease, message_id, "user", blocks, "complete")
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
        return {"role": "user", "content": blocks, "id": message_id}

    def _end_elsewhere(self, status: str, error: tuple[str, str] | None) -> str:
        """The log already ended (the row did not): record the end, send nothing more."""
        try:
            record_end(self, status, error, emit_end=False)
        except LeaseLost:
            self.stop_kind = "fenced"
            return self._leave()
        return status

    def _leave(self) -> str:
        """Stop without a word: flush our events, and free the turn if we handed it over."""
        try:
            self.deps.events.release(self.turn.turn_id, self.lease.number)
            if self.stop_kind == "handover":
                self.deps.turns.release(self.lease)
        except Exception:
            log.exception("handing over turn %s failed; the reaper will", self.turn.turn_id)
        log.info("turn %s: left to another worker (%s)", self.turn.turn_id, self.stop_kind)
        return str(self.stop_kind)

"""One turn, as one task of the engine's loop: call the model, run its tools, until it stops.

A turn holds its lease. A fresh turn starts with turn_start; a turn taken over from a dead
worker first sends what clients missed (engine/turns/resume.py) and goes on from the stored
rows. It stops when asked (`stop`): a cancel ends it `cancelled`; a hand-over (the worker
drains), a fence (the lease moved) or a hand-back (its log was unreachable at takeover)
stop it quietly, writing nothing more, and the lease's next holder ends it.

How it ends: the outcome is stored with the whole log (turn_end included) before turn_end is
sent, so a client that saw turn_end finds the turn finished and a reader that finds it
finished finds its archive. Only when the database stays out past STORE_OUTAGE_SECONDS is
turn_end sent first: the turn ends `failed` (`storage_unavailable`) for its clients, and its
task keeps trying to record that until the database is back (or the worker stops, and the
next holder of the lease finds turn_end in the log and records it).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from datetime import timedelta
from typing import Any, TypeVar

from domain.errors import (
    EndedElsewhere,
    LeaseLost,
    OutageOutlasted,
    StorageUnavailable,
    TurnCancelled,
    TurnFailed,
)
from engine.events.log import last_seq
from engine.runtime import this_task
from engine.store.fence import Lease
from engine.store.turn_rows import NewTurn, Runnable
from engine.turns import resume
from engine.turns.model_calls import ModelCalls
from engine.turns.outbox import Outbox
from engine.turns.shared import TurnDeps
from engine.turns.tools import BadInput, tool_calls
from engine.upstream.conversation import Conversation, freeze
from models import new_id, utcnow
from models.chat import APPROVED, TOOL_AWAITING, TURN_AWAITING
from streaming.messages.history import repair_history, validate_history
from streaming.wire import events as E
from streaming.wire.protocol import encode_event
from streaming.wire.view import view_of
from telemetry.metrics import EVENTS

log = logging.getLogger(__name__)
T = TypeVar("T")

TRUNCATED = {
    "max_tokens": "The reply was cut off at the output token limit; ask for a shorter answer.",
    "model_context_window_exceeded": "The reply ran out of room in the model's context "
    "window; ask again (the oldest turns are left out of the model's view as needed).",
}
REFUSAL = "The model declined to answer this request."
INTERNAL = ("internal_error", "The turn failed on our side.")
UNAVAILABLE = (OutageOutlasted.code, OutageOutlasted.message)
QUIET = ("handover", "fenced", "handback")


class LeaveQuietly(Exception):
    """The turn stops without a word: another worker will go on with it."""


class Turn:
    """Runs one turn to an end state, or stops quietly when another worker must end it."""

    def __init__(
        self,
        deps: TurnDeps,
        turn: NewTurn,
        user_id: int,
        lease: Lease,
        takeovers: int = 0,
        stalls: int = 0,
        worker_id: str | None = None,
        epoch: int = 0,
    ) -> None:
        self.deps, self.turn, self.user_id, self.lease = deps, turn, user_id, lease
        self.takeovers, self.stalls, self.worker_id = takeovers, stalls, worker_id
        self.epoch = epoch  # the generation of the turn's event log
        # What the end of this turn started (a continuation, the next queued turn).
        self.successors: list[Runnable] = []
        self.outbox = Outbox(deps.events, deps.store, lease)
        self.calls = ModelCalls(deps, turn.turn_id)
        self.stop_kind: str | None = None
        self.started = self.closing = False
        self.rounds = 0
        self.task: asyncio.Task[str] | None = None
        self.shown_errors: set[str] = set()
        # Requests for approval clients saw before a takeover: a resumed round does not repeat them.
        self.shown_requests: set[str] = set()
        # Replies the output limit cut mid-tool-call: the first is answered and the turn goes on.
        self.cuts = 0
        self._counted = 0
        # What the conversation sends whatever its history (read as the turn begins).
        self.conversation: Conversation | None = None

    def stop(self, kind: str) -> None:
        """Stop the turn: `cancel` (the client asked) or a quiet kind (QUIET)."""
        if self.stop_kind is not None or self.closing:
            return
        self.stop_kind = kind
        if self.started and self.task is not None:
            self.task.cancel()  # a turn not started yet sees stop_kind as it starts

    def quiet(self) -> bool:
        """True once the turn must end without a word."""
        return self.stop_kind in QUIET

    async def run(self) -> str:
        """Run the turn and return its final status; clients always get turn_end last."""
        self.task = this_task()
        self.started = True
        error: tuple[str, str] | None
        status, error = "failed", INTERNAL
        try:
            if self.stop_kind is not None:
                raise asyncio.CancelledError()  # stopped before it began
            history, stop = await self._begin()
            status, error = await self._rounds(history, stop), None
        except asyncio.CancelledError:
            this_task().uncancel()
            self.stop_kind = self.stop_kind or "handover"  # cancelled from outside: shutdown
            status, error = "cancelled", None
        except TurnCancelled:
            status, error = "cancelled", None
        except (LeaveQuietly, LeaseLost):
            self.stop_kind = self.stop_kind if self.quiet() else "fenced"
        except TurnFailed as err:
            status = "interrupted" if err.code == resume.WORKER_LOST else status
            error = (err.code, err.message)
        except StorageUnavailable as err:
            error = (err.code, err.message)
        except EndedElsewhere as ended:
            self.closing = True
            return await self._record_elsewhere(ended.status, ended.error)
        except Exception:
            log.exception("turn %s crashed", self.turn.turn_id)
        self.closing = True
        try:
            if self.quiet():
                return await self._leave()
            return await self._finish(status, error)
        finally:
            self.count_events()

    # How a turn ends: close what is open, settle every row, record the outcome, archive.

    async def _finish(self, status: str, error: tuple[str, str] | None) -> str:
        """End the turn whatever fails: the client always gets turn_end last.

        If another worker holds the turn now, it stops without another word instead.
        """
        try:
            return await self._close(status, error)
        except LeaseLost:
            return await self._leave_fenced()

    async def _record_elsewhere(self, status: str, error: tuple[str, str] | None) -> str:
        """The log a dead worker left holds turn_end already: store the outcome, send nothing."""
        deps, turn_id = self.deps, self.turn.turn_id
        try:
            frames = deps.events.snapshot(turn_id, self.lease.number)
            self.successors = await deps.store.until_back(
                deps.turns.finish_turn,
                self.lease,
                status,
                self.rounds,
                error,
                frames,
                self.worker_id,
            )
        except LeaseLost:
            return await self._leave_fenced()
        deps.events.finish(turn_id, self.lease.number, archived=True)
        return status

    async def _leave(self) -> str:
        """Stop without a word: flush our events, and free the turn if we handed it over."""
        deps, turn_id = self.deps, self.turn.turn_id
        try:
            await deps.events.release(turn_id, self.lease.number)
        except Exception as err:
            log.warning("turn %s: its queued events were not written (%s)", turn_id, err)
        if self.stop_kind in ("handover", "handback"):
            try:
                await deps.store.durable(deps.turns.release, self.lease)
            except Exception as err:
                log.warning(
                    "turn %s: not handed over (%s); its worker's heartbeat will", turn_id, err
                )
        log.info("turn %s: left to another worker (%s)", turn_id, self.stop_kind)
        return str(self.stop_kind)

    async def _leave_fenced(self) -> str:
        self.stop_kind = "fenced"
        return await self._leave()

    async def _close(self, status: str, error: tuple[str, str] | None) -> str:
        current, self.calls.current = self.calls.current, None
        if current is not None:
            current.abort("cancelled" if status == "cancelled" else "error")
        if error is not None and error != UNAVAILABLE:
            self.outbox.emit(E.turn_error(*error))
        deps = self.deps
        try:
            await self.outbox.settled()
            await deps.store.durable(deps.messages.discard_streaming, self.lease)
        except LeaseLost:
            raise
        except StorageUnavailable:
            return await self._fail_unstored(UNAVAILABLE)
        except Exception:
            log.exception("ending turn %s: its rows could not be stored", self.turn.turn_id)
            return await self._fail_unstored(INTERNAL)
        if error == UNAVAILABLE:
            self.outbox.emit(E.turn_error(*error))
        return await self._record(status, error)

    async def _record(self, status: str, error: tuple[str, str] | None) -> str:
        """Store the outcome with the whole log (turn_end included), then send turn_end."""
        deps, turn_id, lease = self.deps, self.turn.turn_id, self.lease
        end = E.turn_end(turn_id, E.turn_status(status))
        frames = deps.events.snapshot(turn_id, lease.number)
        frames += encode_event(last_seq(frames) + 1, *end)
        try:
            self.successors = await deps.store.durable(
                deps.turns.finish_turn, lease, status, self.rounds, error, frames, self.worker_id
            )
        except StorageUnavailable:
            # Every row is stored; only the turn's own row waits for the database.
            return await self._end_first(status, error)
        self.outbox.emit(end)
        deps.events.finish(turn_id, lease.number, archived=True)
        return status

    async def _fail_unstored(self, error: tuple[str, str]) -> str:
        """Rows could not be stored: drop what was never shown, close what was, end `failed`."""
        deps, turn_id = self.deps, self.turn.turn_id
        self.outbox.drop()
        view = view_of(deps.events.snapshot(turn_id, self.lease.number))
        for event in resume.close_open(view, error[0]):
            self.outbox.emit(event)
        if error[0] not in {code for code, _ in view.errors}:
            self.outbox.emit(E.turn_error(*error))
        return await self._end_first("failed", error)

    async def _end_first(self, status: str, error: tuple[str, str] | None) -> str:
        """Send turn_end now; store the outcome (and settle stray rows) once the store is back."""
        deps, turn_id, lease = self.deps, self.turn.turn_id, self.lease
        self.outbox.emit(E.turn_end(turn_id, E.turn_status(status)))
        frames = deps.events.snapshot(turn_id, lease.number)
        deps.events.finish(turn_id, lease.number, archived=False)
        log.warning("turn %s ended %s; its row waits for the database", turn_id, status)
        try:
            await deps.store.until_back(deps.messages.discard_streaming, lease)
            self.successors = await deps.store.until_back(
                deps.turns.finish_turn, lease, status, self.rounds, error, frames, self.worker_id
            )
        except LeaseLost:
            return status  # taken over meanwhile: the new holder found turn_end and recorded it
        deps.events.forget(turn_id)
        log.warning("turn %s: its end is recorded", turn_id)
        return status

    def count_events(self) -> None:
        """Add the events emitted since the last count to the metric."""
        emitted = self.outbox.emitted
        if emitted > self._counted:
            EVENTS.inc(emitted - self._counted)
            self._counted = emitted

    async def _begin(self) -> tuple[list[dict[str, Any]], str | None]:
        """Announce the turn, or catch clients up after a takeover; return where it stands."""
        deps, turn_id = self.deps, self.turn.turn_id
        _, start = E.turn_start(
            turn_id,
            self.turn.session_id,
            self.turn.user_message_id,
            continues=self.turn.continues or None,
        )
        if not self.takeovers:
            self.outbox.emit((E.TURN_START, start))
            branch = await deps.store.durable(deps.messages.conversation, self.turn.session_id)
            self.conversation = await self._open(branch)
            if self.turn.continues:
                # Its calls were decided, not answered: they are run (or declined) first.
                return branch, _stop_of(branch)
            return repair_history(branch), _stop_of(branch)
        frames = await self._take_log()
        if not frames:
            # The log of this epoch is lost (Redis restarted empty): nobody can say what
            # clients saw, so they get the whole turn again, numbered above any id they hold.
            self.epoch = await deps.store.durable(deps.turns.next_epoch, self.lease)
            await self._log_call(deps.events.restart(turn_id, self.lease.number, self.epoch))
            log.warning("turn %s: its event log was lost; now epoch %d", turn_id, self.epoch)
            start["reset"] = True
        view = view_of(frames)
        if view.status is not None:
            raise EndedElsewhere(view.status, view.errors[-1] if view.errors else None)
        self.shown_errors = {code for code, _ in view.errors}
        self.shown_requests = view.approvals_requested
        rows = await deps.store.durable(deps.messages.turn_messages, turn_id)
        for event in resume.catch_up(view, rows, start):
            self.outbox.emit(event)
        await deps.store.durable(deps.messages.discard_streaming, self.lease)
        self.rounds = resume.standing(rows).rounds
        if self.stalls > deps.max_takeovers:
            raise TurnFailed(
                resume.WORKER_LOST,
                f"The servers running this turn stopped {self.stalls} times in a row without "
                "getting further; it was ended to protect the others. What was completed is "
                "saved; ask again.",
            )
        log.warning("turn %s: taken over (takeover %d)", turn_id, self.takeovers)
        # Unrepaired: a stored tool call whose results were not stored yet must be answered
        # by its tools (or their claims), not by the synthetic results repair would add.
        conversation = await deps.store.durable(deps.messages.conversation, self.turn.session_id)
        self.conversation = await self._open(conversation)
        return conversation, _stop_of(conversation)

    async def _open(self, branch: list[dict[str, Any]]) -> Conversation:
        """The session's own copy of system and tools (made now if it has none) and its
        binding flag. A session from before copies were kept, with thinking blocks bound to
        what it sent then, drops such blocks from the start."""
        deps = self.deps
        spec = deps.model.shape.spec
        fresh = freeze(deps.tools_sent(), deps.model.system)
        legacy = any(
            isinstance(block, dict) and block.get("type") == "thinking"
            for message in branch
            if message["role"] == "assistant" and isinstance(message["content"], list)
            for block in message["content"]
        )
        if deps.prompts is None:
            return Conversation(fresh, spec, legacy)
        prompt, drop = await deps.store.durable(
            deps.prompts.open, self.turn.session_id, fresh, legacy
        )
        return Conversation(prompt, spec, drop)

    async def _take_log(self) -> bytes:
        """Fence the last holder out of the event log; its frames of this epoch (b"" if lost)."""
        events, turn_id = self.deps.events, self.turn.turn_id
        return await self._log_call(events.takeover(turn_id, self.lease.number, self.epoch))

    async def _log_call(self, call: Awaitable[T]) -> T:
        """Await a takeover step of the log; an unreachable log gives the turn back."""
        try:
            return await call
        except LeaseLost:
            raise
        except Exception as err:
            # The log is out: whoever takes the turn next must see what clients saw.
            turn_id = self.turn.turn_id
            log.warning("turn %s: its event log is unreachable (%s); given back", turn_id, err)
            self.stop_kind = "handback"
            raise LeaveQuietly() from err

    async def _rounds(self, history: list[dict[str, Any]], stop: str | None) -> str:
        tool_errors: dict[str, BadInput] = {}
        while True:
            if history and history[-1]["role"] == "assistant":
                outcome = await self._after_message(history[-1]["content"], stop, tool_errors)
                if isinstance(outcome, str):
                    return outcome
                if outcome is not None:
                    history.append(outcome)
            if self.rounds >= self.deps.max_rounds:
                return "max_rounds"
            if self.stop_kind == "cancel":
                raise TurnCancelled()
            if self.deps.worker.draining:
                # Between rounds nothing is in flight: the cheapest moment to hand over.
                self.stop_kind = "handover"
                raise LeaveQuietly()
            self.rounds += 1
            # Repair drops what the API refuses (e.g. whitespace-only text before a tool call)
            # and merges a pause_turn continuation into the message it continues; the
            # conversation decides what is sent of it (engine/upstream/conversation.py).
            history = repair_history(history)
            problems = validate_history(history, expect_user_last=stop != "pause_turn")
            if problems:
                raise TurnFailed("invalid_history", "; ".join(problems))
            if self.conversation is None:  # opened as the turn began
                raise TurnFailed(*INTERNAL)
            result, self.conversation = await self.calls.stream(
                history, self.outbox, self.lease, self.conversation
            )
            self.count_events()
            history.append(result.as_history())
            stop, tool_errors = result.stop_reason, result.tool_errors

    async def _after_message(
        self, content: list[dict[str, Any]], stop: str | None, tool_errors: dict[str, BadInput]
    ) -> str | dict[str, Any] | None:
        """Act on a finished assistant message: a final status, tool results, or go on."""
        if stop == "tool_use":
            answer = await self._answer_tools(content, tool_errors, None)
            return "completed" if answer is None else answer
        if stop in TRUNCATED:
            refusal = f"The tool was not run: the reply stopped ({stop})."
            answer = await self._answer_tools(content, tool_errors, refusal)
            cut = any(bad.cut for bad in tool_errors.values()) or any(
                (bad := BadInput.from_block(block)) is not None and bad.cut for block in content
            )
            if cut and self.cuts == 0:
                self.cuts += 1  # the model reads why and may call again with less input
                return answer
            raise TurnFailed(stop, TRUNCATED[stop])
        if stop == "refusal":
            if "refusal" not in self.shown_errors:
                self.outbox.emit(E.turn_error("refusal", REFUSAL))
            return "completed"
        return None if stop == "pause_turn" else "completed"

    async def _answer_tools(
        self, content: list[dict[str, Any]], errors: dict[str, BadInput], refuse: str | None
    ) -> str | dict[str, Any] | None:
        """Run (or refuse) every tool_use of a message; store and emit one results message.

        A call that needs the user's approval pauses the turn: `awaiting_approval`.
        """
        calls = tool_calls(content, errors, refuse)
        if not calls:
            return None
        deps = self.deps
        runs = await deps.tools.run_all(self.lease, self.user_id, calls, self.quiet)
        waiting = [run for run in runs if run.status == TOOL_AWAITING]
        if waiting:
            expires = (utcnow() + timedelta(seconds=deps.timings.approval_ttl)).isoformat()
            for run, call in zip(runs, calls, strict=True):
                if run.status == TOOL_AWAITING and run.tool_use_id not in self.shown_requests:
                    self.outbox.emit(
                        E.approval_requested(
                            self.turn.turn_id,
                            run.tool_use_id,
                            run.name,
                            call.input,
                            run.preview,
                            expires,
                        )
                    )
            return TURN_AWAITING
        for run in runs:
            if run.preview is not None:
                self.outbox.emit(approval_resolved(run))
        blocks = [run.block() for run in runs]
        message_id = new_id("msg")
        await deps.store.durable(
            deps.messages.add_message, self.lease, message_id, "user", blocks, "complete"
        )
        for run, block in zip(runs, blocks, strict=True):
            self.outbox.emit(E.tool_result(message_id, block, run.name))
        return {"role": "user", "content": blocks, "id": message_id}


def _stop_of(branch: list[dict[str, Any]]) -> str | None:
    """How the branch's last answer stopped (None if it ends with a question)."""
    last = branch[-1] if branch else None
    return last.get("stop_reason") if last is not None and last["role"] == "assistant" else None


def approval_resolved(run: Any) -> E.ApprovalResolvedEvent:
    """The approval_resolved event of a decided call."""
    return E.approval_resolved(run.tool_use_id, run.name, run.approval == APPROVED, run.reason)

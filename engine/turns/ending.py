"""How a turn ends: close what is open, settle every row, record the outcome, archive.

The outcome is stored with the whole log (turn_end included) before turn_end is sent, so
a client that saw turn_end finds the turn finished and a reader that finds it finished
finds its archive. Only when the database stays out past STORE_OUTAGE_SECONDS is turn_end
sent first: the turn ends `failed` (`storage_unavailable`) for its clients, and this task
keeps trying to record that until the database is back (or the worker stops, and the
next holder of the lease finds turn_end in the log and records it).
"""

from __future__ import annotations

import logging
from typing import Protocol

from engine.errors import LeaseLost, OutageOutlasted, StorageUnavailable
from engine.events.log import last_seq
from engine.store.fence import Lease
from engine.store.records import NewTurn, Runnable
from engine.turns import resume
from engine.turns.calls import ModelCalls
from engine.turns.deps import TurnDeps
from engine.turns.outbox import Outbox
from streaming import events as E
from streaming.protocol import encode_event
from streaming.view import view_of

log = logging.getLogger(__name__)
UNAVAILABLE = (OutageOutlasted.code, OutageOutlasted.message)
INTERNAL = ("internal_error", "The turn failed on our side.")


class Ending(Protocol):
    """What ending a turn needs of it (engine/turns/turn.py's Turn)."""

    deps: TurnDeps
    turn: NewTurn
    lease: Lease
    outbox: Outbox
    calls: ModelCalls
    rounds: int
    stop_kind: str | None
    worker_id: str | None
    successors: list[Runnable]


async def close(turn: Ending, status: str, error: tuple[str, str] | None) -> str:
    """End the turn whatever fails: the client always gets turn_end last.

    If another worker holds the turn now, it stops without another word instead.
    """
    try:
        return await _close(turn, status, error)
    except LeaseLost:
        return await _fenced(turn)


async def record_elsewhere(turn: Ending, status: str, error: tuple[str, str] | None) -> str:
    """The log a dead worker left holds turn_end already: store the outcome, send nothing."""
    deps, turn_id = turn.deps, turn.turn.turn_id
    try:
        frames = deps.events.snapshot(turn_id, turn.lease.number)
        turn.successors = await deps.store.until_back(
            deps.turns.finish_turn, turn.lease, status, turn.rounds, error, frames, turn.worker_id
        )
    except LeaseLost:
        return await _fenced(turn)
    deps.events.finish(turn_id, turn.lease.number, archived=True)
    return status


async def leave(turn: Ending) -> str:
    """Stop without a word: flush our events, and free the turn if we handed it over."""
    deps, turn_id = turn.deps, turn.turn.turn_id
    try:
        await deps.events.release(turn_id, turn.lease.number)
    except Exception as err:
        log.warning("turn %s: its queued events were not written (%s)", turn_id, err)
    if turn.stop_kind in ("handover", "handback"):
        try:
            await deps.store.durable(deps.turns.release, turn.lease)
        except Exception as err:
            log.warning("turn %s: not handed over (%s); its worker's heartbeat will", turn_id, err)
    log.info("turn %s: left to another worker (%s)", turn_id, turn.stop_kind)
    return str(turn.stop_kind)


async def _fenced(turn: Ending) -> str:
    turn.stop_kind = "fenced"
    return await leave(turn)


async def _close(turn: Ending, status: str, error: tuple[str, str] | None) -> str:
    current, turn.calls.current = turn.calls.current, None
    if current is not None:
        current.abort("cancelled" if status == "cancelled" else "error")
    if error is not None and error != UNAVAILABLE:
        turn.outbox.emit(E.turn_error(*error))
    deps = turn.deps
    try:
        await turn.outbox.settled()
        await deps.store.durable(deps.messages.discard_streaming, turn.lease)
    except LeaseLost:
        raise
    except StorageUnavailable:
        return await _fail_unstored(turn, UNAVAILABLE)
    except Exception:
        log.exception("ending turn %s: its rows could not be stored", turn.turn.turn_id)
        return await _fail_unstored(turn, INTERNAL)
    if error == UNAVAILABLE:
        turn.outbox.emit(E.turn_error(*error))
    return await _record(turn, status, error)


async def _record(turn: Ending, status: str, error: tuple[str, str] | None) -> str:
    """Store the outcome with the whole log (turn_end included), then send turn_end."""
    deps, turn_id, lease = turn.deps, turn.turn.turn_id, turn.lease
    end = E.turn_end(turn_id, E.turn_status(status))
    frames = deps.events.snapshot(turn_id, lease.number)
    frames += encode_event(last_seq(frames) + 1, *end)
    try:
        turn.successors = await deps.store.durable(
            deps.turns.finish_turn, lease, status, turn.rounds, error, frames, turn.worker_id
        )
    except StorageUnavailable:
        # Every row is stored; only the turn's own row waits for the database.
        return await _end_first(turn, status, error)
    turn.outbox.emit(end)
    deps.events.finish(turn_id, lease.number, archived=True)
    return status


async def _fail_unstored(turn: Ending, error: tuple[str, str]) -> str:
    """Rows could not be stored: drop what was never shown, close what was, end `failed`."""
    deps, turn_id = turn.deps, turn.turn.turn_id
    turn.outbox.drop()
    view = view_of(deps.events.snapshot(turn_id, turn.lease.number))
    for event in resume.close_open(view, error[0]):
        turn.outbox.emit(event)
    if error[0] not in {code for code, _ in view.errors}:
        turn.outbox.emit(E.turn_error(*error))
    return await _end_first(turn, "failed", error)


async def _end_first(turn: Ending, status: str, error: tuple[str, str] | None) -> str:
    """Send turn_end now; store the outcome (and settle stray rows) once the database is back."""
    deps, turn_id, lease = turn.deps, turn.turn.turn_id, turn.lease
    turn.outbox.emit(E.turn_end(turn_id, E.turn_status(status)))
    frames = deps.events.snapshot(turn_id, lease.number)
    deps.events.finish(turn_id, lease.number, archived=False)
    log.warning("turn %s ended %s; its row waits for the database", turn_id, status)
    try:
        await deps.store.until_back(deps.messages.discard_streaming, lease)
        turn.successors = await deps.store.until_back(
            deps.turns.finish_turn, lease, status, turn.rounds, error, frames, turn.worker_id
        )
    except LeaseLost:
        return status  # taken over meanwhile: the new holder found turn_end and recorded it
    deps.events.forget(turn_id)
    log.warning("turn %s: its end is recorded", turn_id)
    return status

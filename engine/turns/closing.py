"""How a turn ends: close what is open, settle every row, record the outcome, archive."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from engine.errors import LeaseLost
from streaming import protocol as P
from streaming.protocol import encode_event

if TYPE_CHECKING:
    from engine.turns.runner import TurnRunner

log = logging.getLogger(__name__)
FINISH_RETRIES = (0.1, 0.5, 1.0)


def close_turn(runner: TurnRunner, status: str, error: tuple[str, str] | None) -> None:
    """End the turn whatever fails: the client always gets turn_end last.

    Raises LeaseLost (before sending anything more) if another worker owns the turn now.
    """
    turn_id = runner.turn.turn_id
    current = runner.calls.take_open()
    steps = [
        lambda: current and current.abort("cancelled" if status == "cancelled" else "error"),
        lambda: error and runner.emit(P.ERROR, {"code": error[0], "message": error[1]}),
        lambda: settle(runner),
    ]
    for step in steps:
        try:
            step()
        except LeaseLost:
            raise
        except Exception:
            log.exception("ending turn %s: a step failed; going on", turn_id)
    record_end(runner, status, error, emit_end=True)


def record_end(
    runner: TurnRunner, status: str, error: tuple[str, str] | None, emit_end: bool
) -> None:
    """Store the outcome with the whole log (turn_end included), then publish turn_end.

    In that order a client that saw turn_end always finds the turn finished, and a reader
    that finds the turn finished always finds its archive.
    """
    turn_id, deps, lease = runner.turn.turn_id, runner.deps, runner.lease.number
    frames = deps.events.snapshot(turn_id, lease)
    end = {"turn_id": turn_id, "status": status}
    if emit_end:
        frames += encode_event(frames.count(b"\n\n") + 1, P.TURN_END, end)
    _finish_row(runner, status, error, frames)
    if emit_end:
        runner.emit(P.TURN_END, end)
    deps.events.finish(turn_id, lease, archived=not runner.unrecorded)


def settle(runner: TurnRunner) -> None:
    """Retry final writes that failed, then discard rows the turn left `streaming`.

    History only takes finished rows, so a row left streaming (its write failed) never
    reaches the model; settling keeps the stored conversation what clients were shown.
    """
    messages, unsettled = runner.deps.messages, runner.calls.unsettled
    if current_open := runner.calls.current:
        unsettled.update(current_open.unsettled)
    for message_id, fields in list(unsettled.items()):
        messages.update_message(runner.lease, message_id, **fields)
        del unsettled[message_id]
    messages.discard_streaming(runner.lease)


def _finish_row(
    runner: TurnRunner, status: str, error: tuple[str, str] | None, frames: bytes
) -> None:
    # A database hiccup must not leave the turn "running" for ever: retry, and if it still
    # fails the service hands the turn over; whoever takes it finds turn_end in the log and
    # records the end.
    for delay in (*FINISH_RETRIES, None):
        try:
            runner.deps.turns.finish_turn(runner.lease, status, runner.rounds, error, frames)
            return
        except LeaseLost:
            raise
        except Exception:
            if delay is None:
                log.exception("could not record the end of turn %s", runner.turn.turn_id)
                runner.unrecorded = True
                return
            time.sleep(delay)

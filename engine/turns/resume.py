"""Take over a turn whose worker died: what clients missed, and where the turn stands.

Events are written after the rows they describe, so the log a dead worker left is a
prefix of what it meant to send and the rows are ahead of it. The new holder of the lease
compares the two and sends only what is missing, numbered after the last event clients
could have seen, so a reader reconnecting with Last-Event-ID just keeps reading.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.events.replay import stored_message
from models import Message
from models.chat import MESSAGE_FINISHED
from streaming.wire import events as E
from streaming.wire import stored
from streaming.wire.events import Event, TurnStart, TurnStartEvent
from streaming.wire.view import MessageView, TurnView

WORKER_LOST = "worker_lost"


@dataclass(frozen=True)
class Standing:
    """Where a turn stands in storage: rounds done and how its last message stopped."""

    rounds: int
    stop_reason: str | None


def catch_up(view: TurnView, rows: list[Message], start: TurnStart) -> list[Event]:
    """Return the events a client that saw `view` needs to show the stored `rows`.

    A message still streaming when its worker died is discarded (its attempt is retried);
    a stored message the client saw only in part is discarded and sent again in full under
    the same id; missing tool results are sent. `start` is the turn_start payload.
    """
    first: TurnStartEvent = (E.TURN_START, start)
    out: list[Event] = [] if view.started else [first]
    names: dict[str, str] = {}
    for message in rows:
        if message.id == start["user_message_id"]:
            continue
        row = stored_message(message)
        if row["role"] != "assistant":
            out += stored.result_events(row, names, skip=view.tool_results)
            continue
        names.update(stored.tool_names(row))
        shown = view.messages.get(row["id"])
        if row["status"] not in MESSAGE_FINISHED:
            if shown is not None and _in_flight(shown):
                out += _drop(row["id"], shown, WORKER_LOST)
        elif shown is None or shown.discarded:
            out += stored.message_events(row)
        elif _in_flight(shown):
            out += _drop(row["id"], shown, WORKER_LOST) + stored.message_events(row)
    return out


def close_open(view: TurnView, reason: str) -> list[Event]:
    """Return the events that discard every message a client shows as still streaming."""
    out: list[Event] = []
    for message_id in view.order:
        shown = view.messages[message_id]
        if _in_flight(shown):
            out += _drop(message_id, shown, reason)
    return out


def standing(rows: list[Message]) -> Standing:
    """Count the turn's finished rounds and read how the last stored message stopped."""
    finished = [r for r in rows if r.status in MESSAGE_FINISHED and r.content]
    rounds = sum(1 for r in finished if r.role == "assistant")
    last = finished[-1] if finished else None
    stop = last.stop_reason if last is not None and last.role == "assistant" else None
    return Standing(rounds, stop)


def _in_flight(shown: MessageView) -> bool:
    return not shown.discarded and not shown.ended


def _drop(message_id: str, shown: MessageView, reason: str) -> list[Event]:
    """End the blocks a client has open for a message, then discard the message."""
    out: list[Event] = [
        E.block_end(
            message_id,
            block_id,
            int(block_id.rsplit(".", 1)[1]),
            {"type": kind},
            incomplete=True,
        )
        for block_id, kind in shown.open_blocks.items()
    ]
    out.append(E.message_discarded(message_id, reason))
    return out

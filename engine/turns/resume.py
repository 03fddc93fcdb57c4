"""Take over a turn whose worker died: what clients missed, and where the turn stands.

Events are written after the rows they describe, so the log a dead worker left is a
prefix of what it meant to send and the rows are ahead of it. The new holder of the lease
compares the two and sends only what is missing, numbered after the last event clients
could have seen, so a reader reconnecting with Last-Event-ID just keeps reading.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.events.replay import message_events, tool_names, tool_result_events
from models import Message
from models.chat import MESSAGE_FINISHED
from streaming import protocol as P
from streaming.view import MessageView, TurnView

Event = tuple[str, dict[str, Any]]
WORKER_LOST = "worker_lost"


@dataclass(frozen=True)
class Standing:
    """Where a turn stands in storage: rounds done and how its last message stopped."""

    rounds: int
    stop_reason: str | None


def catch_up(view: TurnView, rows: list[Message], start: dict[str, Any]) -> list[Event]:
    """Return the events a client that saw `view` needs to show the stored `rows`.

    A message still streaming when its worker died is discarded (its attempt is retried);
    a stored message the client saw only in part is discarded and sent again in full under
    the same id; missing tool results are sent. `start` is the turn_start payload.
    """
    out: list[Event] = [] if view.started else [(P.TURN_START, start)]
    names: dict[str, str] = {}
    for row in rows:
        if row.id == start["user_message_id"]:
            continue
        if row.role != "assistant":
            out += tool_result_events(row, names, skip=view.tool_results)
            continue
        names.update(tool_names(row))
        shown = view.messages.get(row.id)
        in_flight = shown is not None and not shown.discarded and not shown.ended
        if row.status not in MESSAGE_FINISHED:
            if in_flight:
                out += _drop(row.id, shown, WORKER_LOST)  # type: ignore[arg-type]
        elif shown is None or shown.discarded:
            out += message_events(row)
        elif in_flight:
            out += _drop(row.id, shown, WORKER_LOST) + message_events(row)  # type: ignore[arg-type]
    return out


def close_open(view: TurnView, reason: str) -> list[Event]:
    """Return the events that discard every message a client shows as still streaming."""
    out: list[Event] = []
    for message_id in view.order:
        shown = view.messages[message_id]
        if not shown.discarded and not shown.ended:
            out += _drop(message_id, shown, reason)
    return out


def standing(rows: list[Message]) -> Standing:
    """Count the turn's finished rounds and read how the last stored message stopped."""
    finished = [r for r in rows if r.status in MESSAGE_FINISHED and r.content]
    rounds = sum(1 for r in finished if r.role == "assistant")
    last = finished[-1] if finished else None
    stop = last.stop_reason if last is not None and last.role == "assistant" else None
    return Standing(rounds, stop)


def _drop(message_id: str, shown: MessageView, reason: str) -> list[Event]:
    """End the blocks a client has open for a message, then discard the message."""
    out: list[Event] = [
        (
            P.BLOCK_END,
            {
                "message_id": message_id,
                "block_id": block_id,
                "index": int(block_id.rsplit(".", 1)[1]),
                "type": kind,
                "incomplete": True,
            },
        )
        for block_id, kind in shown.open_blocks.items()
    ]
    out.append((P.MESSAGE_DISCARDED, {"message_id": message_id, "reason": reason, "attempt": 0}))
    return out

"""Rebuild a finished turn's client events from stored messages when no archive exists."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select

from engine.events.log import Chunk
from models import Message, Turn
from models.db import Database
from streaming.wire import events as E
from streaming.wire import protocol as P
from streaming.wire import stored
from streaming.wire.events import Event
from streaming.wire.stored import StoredMessage


def replay_turn(db: Database, turn_id: str, after: int) -> Chunk:
    """Rebuild a finished turn whose live events are lost (its worker died) from storage.

    The rebuilt events cannot match the lost numbering, so a reader that already had
    events (after > 0) gets them numbered from after+1, opened by a `turn_start` with
    `reset: true`: it drops what it showed for this turn and renders the rebuilt one.
    """
    with db.read() as s:
        turn = s.get(Turn, turn_id)
        rows = s.scalars(
            select(Message).where(Message.turn_id == turn_id).order_by(Message.position)
        ).all()
        events = turn_events(turn, rows, reset=bool(after)) if turn else []
    blob = b"".join(P.encode_event(after + i, t, d) for i, (t, d) in enumerate(events, 1))
    return Chunk(blob, after + len(events), True)


def turn_events(turn: Turn, rows: Sequence[Message], reset: bool = False) -> list[Event]:
    """Return the event sequence a client needs to render a stored turn."""
    first_user = next((m.id for m in rows if m.role == "user"), None)
    out: list[Event] = [
        E.turn_start(turn.id, turn.session_id, first_user, replayed=True, reset=reset)
    ]
    shown = [stored_message(m) for m in rows if m.id != first_user]
    for events in stored.row_events(shown):
        out += events
    if turn.error_code:
        out.append(E.turn_error(turn.error_code, turn.error_message))
    out.append(E.turn_end(turn.id, E.turn_status(turn.status)))
    return out


def message_events(msg: Message) -> list[Event]:
    """Return the events that show a stored assistant message from start to end."""
    return stored.message_events(stored_message(msg))


def stored_message(msg: Message) -> StoredMessage:
    """A message row as the pure derivation reads it."""
    return {
        "id": msg.id,
        "role": msg.role,
        "content": msg.content,
        "partial_content": msg.partial_content,
        "status": msg.status,
        "model": msg.model,
        "stop_reason": msg.stop_reason,
        "usage": msg.usage,
        "turn_id": msg.turn_id,
    }

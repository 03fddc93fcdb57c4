"""The turn records the stores share: a turn to run, and the insert of a turn row."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection, insert

from engine.store.core import table
from engine.store.fence import Lease
from models import Turn

_TURNS = table(Turn)
_NEW_TURN = insert(_TURNS)


@dataclass(frozen=True)
class NewTurn:
    """Ids of a turn: its question (its own, or the one it answers again) and what it continues."""

    turn_id: str
    session_id: str
    user_message_id: str
    continues: str | None = None
    traceparent: str | None = None  # the trace the turn started in (telemetry/tracing.py)


@dataclass(frozen=True)
class Started(NewTurn):
    """A turn just asked for: running now, or queued (after asking the running one to stop)."""

    queued: bool = False
    interrupted: str | None = None


@dataclass(frozen=True)
class Runnable:
    """A turn this worker is to run now: new, promoted from the queue, or taken over."""

    turn: NewTurn
    user_id: int
    lease: Lease
    takeovers: int = 0
    stalls: int = 0  # takeovers in a row that found no new finished message
    epoch: int = 0  # the generation of the turn's event log (engine/events/log.py)

    @classmethod
    def fresh(
        cls,
        turn_id: str,
        session_id: str,
        user_id: int,
        question_id: str | None,
        continues: str | None = None,
    ) -> Runnable:
        """A turn that starts now with lease 1."""
        turn = NewTurn(turn_id, session_id, question_id or "", continues)
        return cls(turn, user_id, Lease(turn_id, session_id, 1))


def insert_turn(
    conn: Connection,
    turn_id: str,
    session_id: str,
    user_id: int,
    status: str,
    worker_id: str | None,
    question_id: str | None,
    continues: str | None = None,
    to_leaf: bool = True,
    traceparent: str | None = None,
) -> None:
    """Insert a turn row (`running` for this worker, or `queued`)."""
    conn.execute(
        _NEW_TURN,
        {
            "id": turn_id,
            "session_id": session_id,
            "user_id": user_id,
            "status": status,
            "worker_id": worker_id,
            "question_id": question_id,
            "continues": continues,
            "to_leaf": to_leaf,
            "traceparent": traceparent,
        },
    )

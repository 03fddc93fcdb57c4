"""Short transactions the turn engine uses to persist sessions, turns and messages."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, timedelta
from typing import Any

from sqlalchemy import func, insert, select, update
from sqlalchemy.exc import IntegrityError

from engine.errors import NotFoundError, TurnConflict
from models import ChatSession, Message, ToolRun, Turn, TurnEvents, new_id, utcnow
from models.chat import TURN_RUNNING
from models.db import Database
from streaming.history import repair_history


@dataclass(frozen=True)
class NewTurn:
    """Ids of a turn just created."""

    turn_id: str
    session_id: str
    user_message_id: str


class TurnStore:
    """Every database write of a turn, each in its own short transaction."""

    def __init__(self, db: Database, stale_after: float = 30.0) -> None:
        self.db = db
        self.stale_after = timedelta(seconds=stale_after)

    def start_turn(self, user_id: int, session_id: str | None, text: str) -> NewTurn:
        """Create a running turn and its user message (and the session if None is given).

        Raises TurnConflict while another turn runs on the session, NotFoundError for a
        session that is missing or someone else's. One transaction: all or nothing.
        """
        if session_id is not None:
            self.interrupt_stale(session_id)
        turn_id, message_id = new_id("turn"), new_id("msg")
        try:
            with self.db.transaction() as s:
                if session_id is None:
                    session_id = new_id("ses")
                    s.execute(
                        insert(ChatSession).values(id=session_id, user_id=user_id, title=text[:80])
                    )
                else:
                    row = s.execute(
                        select(ChatSession.user_id, ChatSession.title).where(
                            ChatSession.id == session_id
                        )
                    ).first()
                    if row is None or row.user_id != user_id:
                        raise NotFoundError("session", session_id)
                    if row.title is None:
                        s.execute(
                            update(ChatSession)
                            .where(ChatSession.id == session_id)
                            .values(title=text[:80])
                        )
                s.execute(
                    insert(Turn).values(
                        id=turn_id, session_id=session_id, user_id=user_id, heartbeat_at=func.now()
                    )
                )
                s.execute(
                    insert(Message).values(
                        id=message_id,
                        session_id=session_id,
                        turn_id=turn_id,
                        role="user",
                        position=_next_position(s, session_id),
                        status="complete",
                        content=[{"type": "text", "text": text}],
                    )
                )
        except IntegrityError as err:
            raise TurnConflict(session_id or "") from err
        return NewTurn(turn_id, session_id, message_id)

    def interrupt_stale(self, session_id: str | None = None) -> int:
        """Mark running turns whose worker stopped beating as interrupted; return how many."""
        values = {
            "status": "interrupted",
            "finished_at": utcnow(),
            "error_code": "interrupted",
            "error_message": "The server stopped while this turn was running.",
        }
        with self.db.transaction() as s:
            # Heartbeats are written and judged by the database's clock, so workers on hosts
            # whose clocks disagree never declare each other dead.
            cutoff = s.scalar(select(func.now())) - self.stale_after
            stmt = update(Turn).where(Turn.status == TURN_RUNNING, Turn.heartbeat_at < cutoff)
            if session_id is not None:
                stmt = stmt.where(Turn.session_id == session_id)
            count = s.execute(stmt.values(**values)).rowcount or 0
            if count:
                s.execute(
                    update(Message)
                    .where(Message.status == "streaming")
                    .where(Message.turn_id.in_(select(Turn.id).where(Turn.status == "interrupted")))
                    .values(status="incomplete")
                )
        return count

    def conversation(self, session_id: str) -> list[dict[str, Any]]:
        """Return the stored messages the API sees: not discarded, not left empty by a cut."""
        with self.db.read() as s:
            rows = s.execute(
                select(Message.role, Message.content)
                .where(Message.session_id == session_id, Message.status != "discarded")
                .order_by(Message.position)
            ).all()
        return [{"role": r, "content": c} for r, c in rows if c]

    def history(self, session_id: str) -> list[dict[str, Any]]:
        """Return the conversation repaired so the API accepts it (e.g. after a crash)."""
        return repair_history(self.conversation(session_id))

    def add_message(
        self,
        turn_id: str,
        session_id: str,
        message_id: str,
        role: str,
        content: list[dict[str, Any]],
        status: str,
        **fields: Any,
    ) -> None:
        """Insert a message at the end of the session."""
        with self.db.transaction() as s:
            s.execute(
                insert(Message).values(
                    id=message_id,
                    session_id=session_id,
                    turn_id=turn_id,
                    role=role,
                    position=_next_position(s, session_id),
                    content=content,
                    status=status,
                    **fields,
                )
            )

    def update_message(self, message_id: str, **fields: Any) -> None:
        """Overwrite some columns of a message."""
        with self.db.transaction() as s:
            s.execute(update(Message).where(Message.id == message_id).values(**fields))

    def tool_run(self, session_id: str, tool_use_id: str) -> ToolRun | None:
        """Return the stored result of a tool_use id in this session, if it ran before."""
        with self.db.read() as s:
            return s.scalar(
                select(ToolRun).where(
                    ToolRun.session_id == session_id, ToolRun.tool_use_id == tool_use_id
                )
            )

    def stored_turn(self, turn_id: str) -> tuple[str | None, float | None, bytes | None]:
        """Return a turn's status, seconds since it finished, and its archived frames."""
        with self.db.read() as s:
            row = s.execute(select(Turn.status, Turn.finished_at).where(Turn.id == turn_id)).first()
            archived = s.get(TurnEvents, turn_id)
        if row is None:
            return None, None, None
        status, finished = row
        age = None
        if finished is not None:
            finished = finished if finished.tzinfo else finished.replace(tzinfo=UTC)
            age = (utcnow() - finished).total_seconds()
        return status, age, archived.frames if archived is not None else None

    def save_tool_run(self, run: ToolRun) -> None:
        """Store a tool result before it is sent anywhere."""
        with self.db.transaction() as s:
            s.add(run)

    def beat(self, turn_id: str, rounds: int) -> bool:
        """Refresh the heartbeat; True if the turn must stop (cancel asked, or not running)."""
        with self.db.transaction() as s:
            alive = s.execute(
                update(Turn)
                .where(Turn.id == turn_id, Turn.status == TURN_RUNNING)
                .values(heartbeat_at=func.now(), rounds=rounds)
            ).rowcount
            # Declared interrupted by another worker (e.g. after a long pause): stop, so two
            # turns never write to one session at once.
            return not alive or bool(
                s.scalar(select(Turn.cancel_requested).where(Turn.id == turn_id))
            )

    def cancel_requested(self, turn_ids: list[str]) -> set[str]:
        """Return which of these turns have a cancel request."""
        with self.db.read() as s:
            return set(
                s.scalars(
                    select(Turn.id).where(Turn.id.in_(turn_ids), Turn.cancel_requested.is_(True))
                )
            )

    def request_cancel(self, turn_id: str) -> None:
        """Flag a running turn for cancellation by whichever worker runs it."""
        with self.db.transaction() as s:
            s.execute(
                update(Turn)
                .where(Turn.id == turn_id, Turn.status == TURN_RUNNING)
                .values(cancel_requested=True)
            )

    def finish_turn(
        self, turn_id: str, status: str, rounds: int, error: tuple[str, str] | None = None
    ) -> None:
        """Record the turn's outcome."""
        code, message = error or (None, None)
        values = {
            "status": status,
            "rounds": rounds,
            "finished_at": utcnow(),
            "error_code": code,
            "error_message": message,
        }
        with self.db.transaction() as s:
            # An interrupted turn stays interrupted: its worker was presumed dead.
            s.execute(
                update(Turn).where(Turn.id == turn_id, Turn.status == TURN_RUNNING).values(**values)
            )

    def archive_events(self, turn_id: str, frames: bytes, last_seq: int) -> None:
        """Keep a finished turn's encoded events for replay once the live log is gone."""
        with self.db.transaction() as s:
            s.merge(TurnEvents(turn_id=turn_id, last_seq=last_seq, frames=frames))


def _next_position(s: Any, session_id: str) -> int:
    current = s.scalar(select(func.max(Message.position)).where(Message.session_id == session_id))
    return 0 if current is None else current + 1

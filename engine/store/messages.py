"""Message rows and tool runs of a turn: fenced writes, and the history the model sees."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, func, insert, select, update

from engine.store.fence import Lease, hold
from models import Message, ToolRun
from models.chat import MESSAGE_FINISHED, TOOL_DONE, TOOL_RUNNING
from models.db import Database
from streaming.history import repair_history

M, R = Message.__table__.c, ToolRun.__table__.c
# Statements are built once (with bind parameters): building one costs more CPU than
# running it on SQLite. The SET clause of an update comes from the values passed.
NEXT_POSITION = (
    select(func.coalesce(func.max(M.position) + 1, 0))
    .where(M.session_id == bindparam("_session"))
    .scalar_subquery()
)
_ADD = insert(Message.__table__).values(position=NEXT_POSITION)
_UPDATE = update(Message.__table__).where(M.id == bindparam("_id"), M.turn_id == bindparam("_turn"))
_STREAMING = select(M.id).where(M.turn_id == bindparam("_turn"), M.status == "streaming")
_DISCARD = update(Message.__table__).where(M.id.in_(bindparam("_ids", expanding=True)))
_CONVERSATION = (
    select(M.id, M.role, M.content)
    .where(M.session_id == bindparam("_session"), M.status.in_(MESSAGE_FINISHED))
    .order_by(M.position)
)
_RUN_KEY = (R.session_id == bindparam("_session"), R.tool_use_id == bindparam("_tool_use"))
_RUN = select(R.tool_use_id, R.name, R.status, R.result, R.is_error).where(*_RUN_KEY)
_CLAIM = insert(ToolRun.__table__)
_FINISH = update(ToolRun.__table__).where(*_RUN_KEY)


@dataclass(frozen=True, slots=True)
class StoredRun:
    """A tool run as stored: claimed (`running`) or done with its result."""

    tool_use_id: str
    name: str
    status: str
    result: list[dict[str, Any]]
    is_error: bool


class MessageStore:
    """Every message and tool-run write of a turn, fenced by its lease, one transaction each."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def add_message(
        self,
        lease: Lease,
        message_id: str,
        role: str,
        content: list[dict[str, Any]],
        status: str,
        **fields: Any,
    ) -> None:
        """Insert a message at the end of the turn's session."""
        row = {"id": message_id, "session_id": lease.session_id, "turn_id": lease.turn_id}
        row.update(role=role, content=content, status=status, _session=lease.session_id)
        with self.db.begin() as conn:
            hold(conn, lease)
            conn.execute(_ADD, {**row, **fields})

    def update_message(self, lease: Lease, message_id: str, **fields: Any) -> None:
        """Overwrite some columns of one of the turn's messages."""
        with self.db.begin() as conn:
            hold(conn, lease)
            conn.execute(_UPDATE, {"_id": message_id, "_turn": lease.turn_id, **fields})

    def discard_streaming(self, lease: Lease) -> list[str]:
        """Mark the turn's rows still `streaming` as discarded; return their ids."""
        with self.db.begin() as conn:
            hold(conn, lease)
            ids = list(conn.scalars(_STREAMING, {"_turn": lease.turn_id}))
            if ids:
                conn.execute(_DISCARD, {"_ids": ids, "status": "discarded"})
        return ids

    def conversation(self, session_id: str) -> list[dict[str, Any]]:
        """Return the finished messages the API sees, in order; rows left empty are skipped.

        Each carries its row's `id` too (never sent: requests take only role and content).
        """
        with self.db.begin_read() as conn:
            rows = conn.execute(_CONVERSATION, {"_session": session_id}).all()
        return [{"role": r, "content": c, "id": i} for i, r, c in rows if c]

    def history(self, session_id: str) -> list[dict[str, Any]]:
        """Return the conversation repaired so the API accepts it (e.g. after a crash)."""
        return repair_history(self.conversation(session_id))

    def turn_messages(self, turn_id: str) -> list[Message]:
        """Return every row of a turn, in order (resume compares them with what was sent)."""
        with self.db.read() as s:
            return list(
                s.scalars(
                    select(Message).where(Message.turn_id == turn_id).order_by(Message.position)
                )
            )

    def claim_tool(
        self, lease: Lease, tool_use_id: str, name: str, tool_input: dict[str, Any]
    ) -> StoredRun | None:
        """Claim a tool_use id before running it; return its existing run if one was claimed.

        None means "claimed now: run it". A run found `running` was started by a worker that
        died or was fenced out: it may or may not have happened, so it is never run again.
        """
        key = {"_session": lease.session_id, "_tool_use": tool_use_id}
        with self.db.begin() as conn:
            hold(conn, lease)
            existing = conn.execute(_RUN, key).first()
            if existing is not None:
                return StoredRun(*existing)
            conn.execute(
                _CLAIM,
                {
                    "session_id": lease.session_id,
                    "tool_use_id": tool_use_id,
                    "turn_id": lease.turn_id,
                    "name": name,
                    "input": tool_input,
                    "result": [],
                    "status": TOOL_RUNNING,
                },
            )
        return None

    def finish_tool(
        self,
        lease: Lease,
        tool_use_id: str,
        result: list[dict[str, Any]],
        is_error: bool,
        duration_ms: int,
    ) -> StoredRun:
        """Store a claimed tool's result before it is sent anywhere; return the run."""
        key = {"_session": lease.session_id, "_tool_use": tool_use_id}
        with self.db.begin() as conn:
            hold(conn, lease)
            conn.execute(
                _FINISH,
                {
                    **key,
                    "result": result,
                    "is_error": is_error,
                    "duration_ms": duration_ms,
                    "status": TOOL_DONE,
                },
            )
            return StoredRun(*conn.execute(_RUN, key).one())

"""Message rows and tool runs of a turn: fenced writes, and the history the model sees."""

from __future__ import annotations

from typing import Any

from sqlalchemy import insert, select, update

from engine.store.fence import Lease, hold
from engine.store.turns import next_position
from models import Message, ToolRun
from models.chat import MESSAGE_FINISHED, TOOL_DONE, TOOL_RUNNING
from models.db import Database
from streaming.history import repair_history


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
        with self.db.transaction() as s:
            hold(s, lease)
            s.execute(
                insert(Message).values(
                    id=message_id,
                    session_id=lease.session_id,
                    turn_id=lease.turn_id,
                    role=role,
                    position=next_position(s, lease.session_id),
                    content=content,
                    status=status,
                    **fields,
                )
            )

    def update_message(self, lease: Lease, message_id: str, **fields: Any) -> None:
        """Overwrite some columns of one of the turn's messages."""
        with self.db.transaction() as s:
            hold(s, lease)
            s.execute(
                update(Message)
                .where(Message.id == message_id, Message.turn_id == lease.turn_id)
                .values(**fields)
            )

    def discard_streaming(self, lease: Lease) -> list[str]:
        """Mark the turn's rows still `streaming` as discarded; return their ids."""
        with self.db.transaction() as s:
            hold(s, lease)
            ids = list(
                s.scalars(
                    select(Message.id).where(
                        Message.turn_id == lease.turn_id, Message.status == "streaming"
                    )
                )
            )
            if ids:
                s.execute(update(Message).where(Message.id.in_(ids)).values(status="discarded"))
        return ids

    def conversation(self, session_id: str) -> list[dict[str, Any]]:
        """Return the finished messages the API sees, in order; rows left empty are skipped.

        Each carries its row's `id` too (never sent: requests take only role and content).
        """
        with self.db.read() as s:
            rows = s.execute(
                select(Message.id, Message.role, Message.content)
                .where(Message.session_id == session_id, Message.status.in_(MESSAGE_FINISHED))
                .order_by(Message.position)
            ).all()
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
    ) -> ToolRun | None:
        """Claim a tool_use id before running it; return its existing run if one was claimed.

        None means "claimed now: run it". A run found `running` was started by a worker that
        died or was fenced out: it may or may not have happened, so it is never run again.
        """
        with self.db.transaction() as s:
            hold(s, lease)
            existing = s.scalar(
                select(ToolRun).where(
                    ToolRun.session_id == lease.session_id, ToolRun.tool_use_id == tool_use_id
                )
            )
            if existing is not None:
                return existing
            s.execute(
                insert(ToolRun).values(
                    session_id=lease.session_id,
                    tool_use_id=tool_use_id,
                    turn_id=lease.turn_id,
                    name=name,
                    input=tool_input,
                    result=[],
                    status=TOOL_RUNNING,
                )
            )
        return None

    def finish_tool(
        self,
        lease: Lease,
        tool_use_id: str,
        result: list[dict[str, Any]],
        is_error: bool,
        duration_ms: int,
    ) -> ToolRun:
        """Store a claimed tool's result before it is sent anywhere; return the run."""
        with self.db.transaction() as s:
            hold(s, lease)
            s.execute(
                update(ToolRun)
                .where(ToolRun.session_id == lease.session_id, ToolRun.tool_use_id == tool_use_id)
                .values(result=result, is_error=is_error, duration_ms=duration_ms, status=TOOL_DONE)
            )
            return s.scalar(
                select(ToolRun).where(
                    ToolRun.session_id == lease.session_id, ToolRun.tool_use_id == tool_use_id
                )
            )

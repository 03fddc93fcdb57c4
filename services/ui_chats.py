"""AI SDK chats: a client's chat id mapped to one session of its user, and its UIMessages."""

from __future__ import annotations

from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.exc import IntegrityError

from engine.errors import NotFoundError
from models import ChatSession, Message, Turn, UIChat, new_id
from models.chat import TURN_RUNNING
from models.db import Database
from streaming.ui_messages import stored_ui_messages

RESUME_MESSAGE_HEADER = "X-Resume-Message-Id"
RESUME_STEPS_HEADER = "X-Resume-Steps"


def chat_session(db: Database, user_id: int, chat_id: str, create: bool = False) -> str | None:
    """Return the session of the user's chat `chat_id`; with `create`, make one if missing."""
    with db.read() as s:
        found = _lookup(s, user_id, chat_id)
    if found is not None or not create:
        return found
    session_id = new_id("ses")
    try:
        with db.transaction() as s:
            s.execute(insert(ChatSession).values(id=session_id, user_id=user_id))
            s.execute(
                insert(UIChat).values(user_id=user_id, chat_id=chat_id, session_id=session_id)
            )
    except IntegrityError:
        # Another request created this chat first: use its session.
        with db.read() as s:
            found = _lookup(s, user_id, chat_id)
        if found is None:
            raise
        return found
    return session_id


def latest_turn(db: Database, session_id: str) -> tuple[str, str] | None:
    """Return (turn id, status) of the session's newest turn, if any."""
    with db.read() as s:
        row = s.execute(
            select(Turn.id, Turn.status)
            .where(Turn.session_id == session_id)
            .order_by(Turn.created_at.desc(), Turn.id.desc())
            .limit(1)
        ).first()
    return (row[0], row[1]) if row else None


def chat_messages(db: Database, user_id: int, chat_id: str) -> dict[str, Any]:
    """Return the chat's stored conversation as UIMessages, and how to resume a running turn."""
    with db.read() as s:
        session_id = _lookup(s, user_id, chat_id)
        if session_id is None:
            raise NotFoundError("chat", chat_id)
        turns = s.execute(
            select(Turn.id, Turn.status, Turn.error_code, Turn.error_message)
            .where(Turn.session_id == session_id)
            .order_by(Turn.created_at)
        ).all()
        rows = s.execute(
            select(
                Message.id,
                Message.turn_id,
                Message.role,
                Message.content,
                Message.partial_content,
                Message.status,
            )
            .where(Message.session_id == session_id)
            .order_by(Message.position)
        ).all()
    messages = stored_ui_messages([r._asdict() for r in turns], [r._asdict() for r in rows])
    running = next((t.id for t in turns if t.status == TURN_RUNNING), None)
    return {
        "id": chat_id,
        "session_id": session_id,
        "messages": messages,
        "running_turn_id": running,
        "resume_headers": _resume_headers(messages, running),
    }


def _resume_headers(messages: list[dict[str, Any]], turn_id: str | None) -> dict[str, str] | None:
    """Headers that resume `turn_id` right after the snapshot these messages show."""
    if turn_id is None:
        return None
    message = next((m for m in messages if m["id"] == turn_id), None)
    if message is None:
        return None
    steps = sum(1 for p in message["parts"] if p["type"] == "step-start")
    return {RESUME_MESSAGE_HEADER: turn_id, RESUME_STEPS_HEADER: str(steps)}


def _lookup(s: Any, user_id: int, chat_id: str) -> str | None:
    return s.scalar(
        select(UIChat.session_id).where(UIChat.user_id == user_id, UIChat.chat_id == chat_id)
    )

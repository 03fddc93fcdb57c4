"""AI SDK chats: a client's chat id mapped to one session of its user, and its UIMessages.

The messages are the active branch; a chain of continuations is one assistant UIMessage.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import insert, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from domain.errors import NotFound
from engine.session_limits import SessionLimits
from engine.store import tree
from models import ChatSession, Message, ToolRun, Turn, UIChat, new_id
from models.chat import TURN_RUNNING
from models.db import Database
from services import ui_asks
from streaming.aisdk.ui_messages import stored_ui_messages

RESUME_MESSAGE_HEADER = "X-Resume-Message-Id"
RESUME_STEPS_HEADER = "X-Resume-Steps"


def chat_session(
    db: Database,
    user_id: int,
    chat_id: str,
    create: bool = False,
    limits: SessionLimits | None = None,
) -> str | None:
    """Return the session of the user's chat `chat_id`; with `create`, make one if missing
    (within the user's `limits`: refused, nothing is written)."""
    with db.read() as s:
        found = _lookup(s, user_id, chat_id)
    if found is not None or not create:
        return found
    session_id = new_id("ses")
    try:
        with db.transaction() as s:
            if limits is not None:
                limits.check(s.connection(), user_id)
            s.execute(insert(ChatSession).values(id=session_id, user_id=user_id))
            s.execute(
                insert(UIChat).values(user_id=user_id, chat_id=chat_id, session_id=session_id)
            )
            if limits is not None:
                limits.count(user_id)
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
    """Return the chat's active branch as UIMessages, and how to resume a running turn."""
    with db.read() as s:
        session_id = _lookup(s, user_id, chat_id)
        if session_id is None:
            raise NotFound("chat", chat_id)
        turns = s.execute(
            select(
                Turn.id,
                Turn.status,
                Turn.error_code,
                Turn.error_message,
                Turn.continues,
                Turn.question_id,
            )
            .where(Turn.session_id == session_id)
            .order_by(Turn.created_at, Turn.id)
        ).all()
        rows = _branch_rows(s, session_id)
        runs = {
            r.tool_use_id: {
                "approval": r.approval,
                "reason": r.reason,
                "preview": r.preview,
                "status": r.status,
            }
            for r in s.execute(
                select(
                    ToolRun.tool_use_id,
                    ToolRun.approval,
                    ToolRun.reason,
                    ToolRun.preview,
                    ToolRun.status,
                ).where(ToolRun.session_id == session_id, ToolRun.requested_in.is_not(None))
            )
            if r.preview is not None
        }
    turn_dicts = [t._asdict() for t in turns]
    messages = stored_ui_messages(turn_dicts, rows, runs)
    running = next((t.id for t in turns if t.status == TURN_RUNNING), None)
    return {
        "id": chat_id,
        "session_id": session_id,
        "messages": messages,
        "running_turn_id": running,
        "resume_headers": _resume_headers(messages, turn_dicts, running),
    }


def resume_point(db: Database, session_id: str, turn_id: str) -> tuple[str, int]:
    """The UIMessage a turn streams into, and the steps its chain's earlier turns made there."""
    with db.read() as s:
        first = ui_asks.head(s, turn_id)
        earlier = ui_asks.chain(s, first)
        earlier = earlier[: earlier.index(turn_id)] if turn_id in earlier else []
        if not earlier:
            return first, 0
        rows = s.execute(
            _ROW_COLUMNS.where(Message.turn_id.in_(earlier)).order_by(Message.position)
        ).all()
    turns = [
        {"id": t, "status": "continued", "continues": earlier[i - 1] if i else None}
        for i, t in enumerate(earlier)
    ]
    shown = stored_ui_messages(turns, [r._asdict() for r in rows if r.role == "assistant"])
    return first, sum(1 for m in shown for p in m["parts"] if p["type"] == "step-start")


_ROW_COLUMNS = select(
    Message.id,
    Message.turn_id,
    Message.role,
    Message.content,
    Message.partial_content,
    Message.status,
    Message.client_id,
    Message.parent_id,
)


def _branch_rows(s: Session, session_id: str) -> list[dict[str, Any]]:
    """The active branch's rows in order, with the discarded attempts of the turns on it."""
    ids = tree.path_ids(s.connection(), session_id)
    on_path = set(ids)
    rows = s.execute(
        _ROW_COLUMNS.where(
            Message.session_id == session_id,
            or_(Message.id.in_(ids), Message.status == "discarded"),
        ).order_by(Message.position)
    ).all()
    # A discarded attempt belongs to the branch if its turn answers on it.
    answering = {r.turn_id for r in rows if r.id in on_path and r.role == "assistant"}
    if ids:
        leaf = next((r for r in rows if r.id == ids[-1]), None)
        if leaf is not None and leaf.role == "user":
            answering |= set(s.scalars(select(Turn.id).where(Turn.question_id == leaf.id)).all())
    return [
        r._asdict()
        for r in rows
        if (r.id in on_path and r.status in tree.SHOWN)
        or (r.status == "discarded" and r.turn_id in answering and r.parent_id in on_path)
    ]


def _resume_headers(
    messages: list[dict[str, Any]], turns: list[dict[str, Any]], turn_id: str | None
) -> dict[str, str] | None:
    """Headers that resume `turn_id` right after the snapshot these messages show."""
    if turn_id is None:
        return None
    continues = {t["id"]: t["continues"] for t in turns}
    first = turn_id
    while continues.get(first):
        first = continues[first]
    message = next((m for m in messages if m["id"] == first), None)
    if message is None:
        return None
    steps = sum(1 for p in message["parts"] if p["type"] == "step-start")
    return {RESUME_MESSAGE_HEADER: first, RESUME_STEPS_HEADER: str(steps)}


def _lookup(s: Any, user_id: int, chat_id: str) -> str | None:
    return s.scalar(
        select(UIChat.session_id).where(UIChat.user_id == user_id, UIChat.chat_id == chat_id)
    )

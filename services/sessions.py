"""Chat sessions and turns as the API shows them, scoped to their owner."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import and_, delete, or_, select
from sqlalchemy.orm import Session

from domain.errors import NotFound, TurnConflict
from engine.events.replay import stored_message
from engine.session_limits import SessionLimits
from engine.store import approvals, tree
from models import ChatSession, Message, Turn
from models.base import iso
from models.chat import MESSAGE_QUEUED, TURN_QUEUED, TURN_RUNNING
from models.db import Database
from models.searchable import search_title
from services.pricing import Prices, summarize
from streaming.wire import stored


def create_session(
    db: Database, user_id: int, title: str | None = None, limits: SessionLimits | None = None
) -> dict[str, Any]:
    """Create an empty session, within the user's `limits` (refused: nothing is written)."""
    with db.transaction() as s:
        if limits is not None:
            limits.check(s.connection(), user_id)
        session = ChatSession(user_id=user_id, title=title, search_title=search_title(title))
        s.add(session)
        s.flush()
        if limits is not None:
            limits.count(user_id)
        return session_dict(session)


def list_sessions(
    db: Database, user_id: int, limit: int = 50, after: tuple[datetime, str] | None = None
) -> tuple[list[dict[str, Any]], tuple[datetime, str] | None]:
    """Return a page of the user's sessions, most recently active first, and the next key.

    `after` is the sort key (updated_at, id) of the last session of the previous page; a
    session is active when a turn moves its branch's leaf, or it is renamed.
    """
    query = select(ChatSession).where(ChatSession.user_id == user_id)
    if after is not None:
        moment, last_id = after
        query = query.where(
            or_(
                ChatSession.updated_at < moment,
                and_(ChatSession.updated_at == moment, ChatSession.id < last_id),
            )
        )
    order = (ChatSession.updated_at.desc(), ChatSession.id.desc())
    with db.read() as s:
        rows = s.scalars(query.order_by(*order).limit(limit + 1)).all()
        page = [session_dict(r) for r in rows[:limit]]
        last = rows[limit - 1] if len(rows) > limit else None
        return page, None if last is None else (last.updated_at, last.id)


def list_messages(
    db: Database,
    user_id: int,
    session_id: str,
    limit: int = 50,
    after: int | None = None,
    before: int | None = None,
    events: bool = False,
) -> tuple[list[dict[str, Any]], int | None, int | None]:
    """Return a page of the active branch, first message first, and the keys around it.

    A key is a number of messages of the branch: the page starts after `after` of them, or
    ends before the `before`-th (given both: the last `limit` between them). The keys returned
    are where the next page starts (None: the branch ends here) and where the page before
    ends (None: this page starts the branch). With `events`, each message carries the
    events that show it (streaming/wire/stored.py).
    """
    with db.read() as s:
        _owned(s.get(ChatSession, session_id), user_id, "session")
        ids = tree.shown_ids(s.connection(), session_id)
        if before is not None:
            end = min(before, len(ids))
            start = max(min(after or 0, end), end - limit)
        else:
            start = min(after or 0, len(ids))
            end = min(start + limit, len(ids))
        page = _messages(s, session_id, ids[start:end], events)
    return page, end if end < len(ids) else None, start or None


def get_session(
    db: Database,
    user_id: int,
    session_id: str,
    prices: Prices | None = None,
    newest: int = 100,
    events: bool = False,
) -> dict[str, Any]:
    """Return a session with the newest `newest` messages of its active branch, queued
    messages, pending approvals and running turn, or raise NotFound; with `prices`, also
    its token totals and `cost` (over every message of every branch).

    `earlier_cursor` is the key of the messages before those shown (None: none), for
    `list_messages(before=...)`. With `events`, each message carries its events.
    """
    with db.read() as s:
        session = _owned(s.get(ChatSession, session_id), user_id, "session")
        out = session_dict(session)
        ids = tree.shown_ids(s.connection(), session_id)
        start = max(0, len(ids) - newest)
        out["messages"] = _messages(s, session_id, ids[start:], events)
        out["earlier_cursor"] = str(start) if start else None
        out["message_count"] = len(ids)
        out.update(_state(s, user_id, session))
        if prices is not None:
            out.update(spent(s, session_id, prices))
    return out


def session_head(
    db: Database, user_id: int, session_id: str, prices: Prices | None = None
) -> tuple[dict[str, Any], list[str]]:
    """A session without its messages (as `get_session` shows it otherwise) and the ids of
    its active branch's shown messages, for reading them in batches; or raise NotFound."""
    with db.read() as s:
        session = _owned(s.get(ChatSession, session_id), user_id, "session")
        out = session_dict(session)
        out.update(_state(s, user_id, session))
        if prices is not None:
            out.update(spent(s, session_id, prices))
        return out, tree.shown_ids(s.connection(), session_id)


def branch_messages(db: Database, session_id: str, ids: list[str]) -> list[dict[str, Any]]:
    """The messages `ids` of a session (a slice of `session_head`'s ids), in that order."""
    with db.read() as s:
        return _messages(s, session_id, ids)


def spent(s: Session, session_id: str, prices: Prices) -> dict[str, Any]:
    """The token totals and cost of every message of the session, read in batches."""
    # Every branch was paid for: the cost counts them all.
    rows = s.execute(
        select(Message.model, Message.usage)
        .where(Message.session_id == session_id)
        .execution_options(yield_per=500)
    )
    return summarize(((model, usage) for model, usage in rows), prices)


def switch_branch(db: Database, user_id: int, session_id: str, message_id: str) -> str:
    """Show the branch through `message_id` (its newest continuation); return the new leaf."""
    with db.transaction() as s:
        _owned(s.get(ChatSession, session_id), user_id, "session")
        if _running(s, user_id, session_id) is not None:
            raise TurnConflict(session_id)
        conn = s.connection()
        row = tree.message(conn, session_id, message_id)
        if row is None or row.status not in tree.SHOWN:
            raise NotFound("message", message_id)
        leaf = tree.descend(conn, message_id)
        tree.set_leaf(conn, session_id, leaf)
        return leaf


def delete_session(db: Database, user_id: int, session_id: str) -> None:
    """Delete a session and everything in it."""
    with db.transaction() as s:
        _owned(s.get(ChatSession, session_id), user_id, "session")
        s.execute(delete(ChatSession).where(ChatSession.id == session_id))


def rename_session(db: Database, user_id: int, session_id: str, title: str) -> dict[str, Any]:
    """Give a session a new title; return the session."""
    with db.transaction() as s:
        session = _owned(s.get(ChatSession, session_id), user_id, "session")
        session.title, session.search_title = title, search_title(title)
        s.flush()
        return session_dict(session)


def get_turn(
    db: Database, user_id: int, turn_id: str, prices: Prices | None = None
) -> dict[str, Any]:
    """Return a turn's status, or raise NotFound; with `prices`, its usage and cost too."""
    with db.read() as s:
        turn = _owned(s.get(Turn, turn_id), user_id, "turn")
        out = {
            "id": turn.id,
            "session_id": turn.session_id,
            "status": turn.status,
            "rounds": turn.rounds,
            "created_at": iso(turn.created_at),
            "finished_at": iso(turn.finished_at),
            "continues": turn.continues,
            "continued_by": approvals.continuation(s.connection(), turn.id),
            "error": {"code": turn.error_code, "message": turn.error_message}
            if turn.error_code
            else None,
        }
        if prices is not None:
            rows = s.execute(select(Message.model, Message.usage).where(Message.turn_id == turn_id))
            out.update(summarize(((model, usage) for model, usage in rows), prices))
        return out


def session_dict(session: ChatSession) -> dict[str, Any]:
    """Return the API form of a session."""
    return {
        "id": session.id,
        "title": session.title,
        "created_at": iso(session.created_at),
        "updated_at": iso(session.updated_at),
    }


def message_dict(msg: Message, siblings: list[str] | None = None) -> dict[str, Any]:
    """Return the API form of a message."""
    return {
        "parent_id": msg.parent_id,
        "sibling_ids": siblings if siblings is not None else [msg.id],
        "id": msg.id,
        "role": msg.role,
        "content": msg.content,
        "partial_content": msg.partial_content,
        "status": msg.status,
        "stop_reason": msg.stop_reason,
        "usage": msg.usage,
        "model": msg.model,
        "turn_id": msg.turn_id,
    }


def running_turn(db: Database, user_id: int, session_id: str) -> str | None:
    """Return the id of the session's running turn, if any."""
    with db.read() as s:
        return _running(s, user_id, session_id)


def _messages(
    s: Session, session_id: str, ids: list[str], events: bool = False
) -> list[dict[str, Any]]:
    """The messages `ids`, in that order, each with its siblings' ids (and its events)."""
    rows = {m.id: m for m in s.scalars(select(Message).where(Message.id.in_(ids)))}
    shown = [rows[i] for i in ids if i in rows]
    versions = tree.siblings(s.connection(), session_id, [m.id for m in shown])
    out = [message_dict(m, versions[m.id]) for m in shown]
    if events and shown:
        # Results name their calls' tools: the answer before a page's first message may hold them.
        before = s.get(Message, shown[0].parent_id) if shown[0].parent_id else None
        names = stored.tool_names(stored_message(before)) if before is not None else {}
        derived = stored.row_events([stored_message(m) for m in shown], names)
        for message, shows in zip(out, derived, strict=True):
            message["events"] = shows
    return out


def _state(s: Session, user_id: int, session: ChatSession) -> dict[str, Any]:
    """What a session holds besides its messages: its leaf, running turn, queue, approvals."""
    return {
        "active_leaf_id": session.active_leaf_id,
        "running_turn_id": _running(s, user_id, session.id),
        "queued": _queued(s, session.id),
        "approvals": approvals.pending(s.connection(), session.id),
    }


def _queued(s: Session, session_id: str) -> list[dict[str, Any]]:
    """The session's queued turns, in the order they will run."""
    rows = s.execute(
        select(Turn.id, Turn.created_at, Message.id, Message.content)
        .outerjoin(Message, (Message.turn_id == Turn.id) & (Message.status == MESSAGE_QUEUED))
        .where(Turn.session_id == session_id, Turn.status == TURN_QUEUED)
        .order_by(Turn.created_at, Turn.id)
    ).all()
    return [
        {
            "turn_id": turn_id,
            "message_id": message_id,
            "text": content[0]["text"] if content else None,
            "created_at": iso(created_at),
        }
        for turn_id, created_at, message_id, content in rows
    ]


def _running(s: Session, user_id: int, session_id: str) -> str | None:
    return s.scalar(
        select(Turn.id).where(
            Turn.session_id == session_id, Turn.user_id == user_id, Turn.status == TURN_RUNNING
        )
    )


def _owned(row: Any, user_id: int, kind: str) -> Any:
    if row is None or row.user_id != user_id:
        raise NotFound(kind)
    return row

"""Chat sessions and turns as the API shows them, scoped to their owner."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Text, and_, cast, delete, or_, select
from sqlalchemy.orm import Session

from engine.errors import NotFoundError
from models import ChatSession, Message, Turn
from models.chat import TURN_RUNNING
from models.db import Database
from services.pricing import Prices, summarize


def create_session(db: Database, user_id: int, title: str | None = None) -> dict[str, Any]:
    """Create an empty session."""
    with db.transaction() as s:
        session = ChatSession(user_id=user_id, title=title)
        s.add(session)
        s.flush()
        return session_dict(session)


def list_sessions(
    db: Database, user_id: int, limit: int = 50, after: tuple[datetime, str] | None = None
) -> tuple[list[dict[str, Any]], list[Any] | None]:
    """Return a page of the user's sessions, newest first, and the next page's key (or None).

    `after` is the sort key (created_at, id) of the last session of the previous page.
    """
    query = select(ChatSession).where(ChatSession.user_id == user_id)
    if after is not None:
        moment, last_id = after
        query = query.where(
            or_(
                ChatSession.created_at < moment,
                and_(ChatSession.created_at == moment, ChatSession.id < last_id),
            )
        )
    order = (ChatSession.created_at.desc(), ChatSession.id.desc())
    with db.read() as s:
        rows = s.scalars(query.order_by(*order).limit(limit + 1)).all()
        page = [session_dict(r) for r in rows[:limit]]
        last = rows[limit - 1] if len(rows) > limit else None
        return page, None if last is None else [last.created_at, last.id]


def list_messages(
    db: Database, user_id: int, session_id: str, limit: int = 50, after: int | None = None
) -> tuple[list[dict[str, Any]], int | None]:
    """Return a page of a session's messages, oldest first, and the next page's key (or None)."""
    position = -1 if after is None else after
    with db.read() as s:
        _owned(s.get(ChatSession, session_id), user_id, "session")
        rows = s.scalars(
            select(Message)
            .where(Message.session_id == session_id, Message.position > position)
            .order_by(Message.position)
            .limit(limit + 1)
        ).all()
        page = [message_dict(m) for m in rows[:limit]]
        return page, rows[limit - 1].position if len(rows) > limit else None


def get_session(
    db: Database, user_id: int, session_id: str, prices: Prices | None = None
) -> dict[str, Any]:
    """Return one session with its messages and running turn, or raise NotFound.

    With `prices`, also its token totals (`usage`) and estimated `cost`.
    """
    with db.read() as s:
        session = _owned(s.get(ChatSession, session_id), user_id, "session")
        out = session_dict(session)
        out["messages"] = [message_dict(m) for m in session.messages]
        out["running_turn_id"] = _running(s, user_id, session_id)
    if prices is not None:
        out.update(summarize(((m["model"], m["usage"]) for m in out["messages"]), prices))
    return out


def delete_session(db: Database, user_id: int, session_id: str) -> None:
    """Delete a session and everything in it."""
    with db.transaction() as s:
        _owned(s.get(ChatSession, session_id), user_id, "session")
        s.execute(delete(ChatSession).where(ChatSession.id == session_id))


def rename_session(db: Database, user_id: int, session_id: str, title: str) -> dict[str, Any]:
    """Give a session a new title; return the session."""
    with db.transaction() as s:
        session = _owned(s.get(ChatSession, session_id), user_id, "session")
        session.title = title
        s.flush()
        return session_dict(session)


SEARCH_BATCH = 200
SNIPPET_CHARS = 80


def search_sessions(
    db: Database,
    user_id: int,
    query: str,
    limit: int = 50,
    after: tuple[datetime, str] | None = None,
) -> tuple[list[dict[str, Any]], list[Any] | None]:
    """Return a page of the user's sessions whose title or message text holds `query`.

    Case-insensitive, newest first, paged like `list_sessions`; each session has a `match`:
    where the words were found and a snippet around them. The database narrows the candidates
    (on stored JSON text, the same on SQLite and PostgreSQL); the text is then checked here.
    """
    needle = query.casefold()
    candidates = select(ChatSession).where(
        ChatSession.user_id == user_id,
        or_(
            _contains_any(ChatSession.title, _spellings(query)),
            ChatSession.id.in_(_messages_holding(query).with_only_columns(Message.session_id)),
        ),
    )
    order = (ChatSession.created_at.desc(), ChatSession.id.desc())
    found: list[tuple[ChatSession, dict[str, str]]] = []
    with db.read() as s:
        while len(found) <= limit:
            page = candidates if after is None else candidates.where(_before(after))
            rows = s.scalars(page.order_by(*order).limit(SEARCH_BATCH)).all()
            texts = _message_texts(s, query, [r.id for r in rows])
            for row in rows:
                match = _match(needle, row.title, texts.get(row.id, []))
                if match is not None:
                    found.append((row, match))
            if len(rows) < SEARCH_BATCH:
                break
            after = (rows[-1].created_at, rows[-1].id)
        page_rows = [{**session_dict(r), "match": m} for r, m in found[:limit]]
        last = found[limit - 1][0] if len(found) > limit else None
        return page_rows, None if last is None else [last.created_at, last.id]


def _before(key: tuple[datetime, str]) -> Any:
    moment, last_id = key
    return or_(
        ChatSession.created_at < moment,
        and_(ChatSession.created_at == moment, ChatSession.id < last_id),
    )


def _spellings(query: str) -> set[str]:
    # LIKE folds only ASCII case on SQLite: the lower and upper forms catch the rest mostly.
    return {query, query.lower(), query.upper()}


def _contains_any(column: Any, needles: set[str]) -> Any:
    return or_(*(column.icontains(n, autoescape=True) for n in sorted(needles)))


def _messages_holding(query: str) -> Any:
    # Messages are stored as JSON text with non-ASCII escaped, so look for the escaped form.
    forms = {json.dumps(n)[1:-1] for n in _spellings(query)}
    return select(Message.session_id, Message.content).where(
        Message.status != "discarded", _contains_any(cast(Message.content, Text), forms)
    )


def _message_texts(s: Session, query: str, session_ids: list[str]) -> dict[str, list[str]]:
    if not session_ids:
        return {}
    texts: dict[str, list[str]] = {}
    rows = s.execute(_messages_holding(query).where(Message.session_id.in_(session_ids)))
    for session_id, content in rows:
        texts.setdefault(session_id, []).extend(text_of(content))
    return texts


def text_of(content: Any) -> list[str]:
    """The text a person reads in stored message content: its text blocks."""
    if isinstance(content, str):
        return [content]
    return [b["text"] for b in content or [] if b.get("type") == "text" and b.get("text")]


def _match(needle: str, title: str | None, texts: list[str]) -> dict[str, str] | None:
    if title and needle in title.casefold():
        return {"in": "title", "snippet": title}
    for text in texts:
        at = text.casefold().find(needle)
        if at >= 0:
            start = max(0, at - SNIPPET_CHARS // 2)
            end = min(len(text), at + len(needle) + SNIPPET_CHARS // 2)
            snippet = " ".join(text[start:end].split())
            return {
                "in": "messages",
                "snippet": ("…" if start else "") + snippet + ("…" if end < len(text) else ""),
            }
    return None


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
    return {"id": session.id, "title": session.title, "created_at": iso(session.created_at)}


def message_dict(msg: Message) -> dict[str, Any]:
    """Return the API form of a message."""
    return {
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


def iso(moment: datetime | None) -> str | None:
    """Format a stored time as ISO 8601 in UTC (SQLite hands times back without a zone)."""
    if moment is None:
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).isoformat()


def running_turn(db: Database, user_id: int, session_id: str) -> str | None:
    """Return the id of the session's running turn, if any."""
    with db.read() as s:
        return _running(s, user_id, session_id)


def _running(s: Session, user_id: int, session_id: str) -> str | None:
    return s.scalar(
        select(Turn.id).where(
            Turn.session_id == session_id, Turn.user_id == user_id, Turn.status == TURN_RUNNING
        )
    )


def _owned(row: Any, user_id: int, kind: str) -> Any:
    if row is None or row.user_id != user_id:
        raise NotFoundError(kind)
    return row

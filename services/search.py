"""Search over the user's chats: titles and the text people read in their messages."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from sqlalchemy import Text, and_, cast, or_, select
from sqlalchemy.orm import Session

from models import ChatSession, Message
from models.db import Database
from services.sessions import session_dict

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

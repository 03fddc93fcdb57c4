"""Search over the user's chats: titles and the text people read in their messages.

The database alone decides what matches: `chat_sessions.search_title` and
`messages.search_text` hold the folded text (models/searchable.py), the query is folded the
same way, and one `LIKE` (escaped, so `%` and `_` are characters) means the same on SQLite
and PostgreSQL. The caller's sessions are walked newest first by keyset in windows that
grow from one session; each window is one statement. The walk stops when the page is full,
when it reached the user's oldest session, or when its budget (`SearchBudget`: a time and a
number of sessions) is spent: then the page found so far is answered `partial` with a
cursor at the last session scanned, and the client asks again from there. Searches run in
the view's `http` thread; `SearchGate` bounds how many run at once.
"""

from __future__ import annotations

import sqlite3
import threading
import time
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, exists, func, or_, select, tuple_
from sqlalchemy.exc import OperationalError

from domain.errors import LimitExceeded
from models import ChatSession, Message
from models.base import iso
from models.db import Database
from models.searchable import fold, text_of

SNIPPET_CHARS = 80
MAX_WINDOW = 512  # sessions per statement, once earlier windows were quick
# SQLite asks its progress handler every this many virtual machine steps (about 1 ms).
SQLITE_STEPS = 10_000
PG_QUERY_CANCELED = "57014"

S, M = ChatSession.__table__.c, Message.__table__.c
ORDER = (S.created_at.desc(), S.id.desc())

__all__ = ["SearchBudget", "SearchGate", "SearchPage", "search_sessions", "text_of"]


@dataclass(frozen=True)
class SearchBudget:
    """How much one request may search: seconds, and sessions scanned."""

    seconds: float
    sessions: int


@dataclass(frozen=True)
class SearchPage:
    """A page of matches, the cursor after it (None: no more) and whether the budget cut it."""

    sessions: list[dict[str, Any]]
    next_key: tuple[datetime, str] | None
    partial: bool


class SearchGate:
    """At most `per_user` searches of one user and `total` in this process run at once."""

    def __init__(
        self,
        per_user: int,
        total: int,
        retry_after: float,
        budget: SearchBudget,
    ) -> None:
        self.per_user, self.total, self.retry_after = per_user, total, retry_after
        self.budget = budget  # what each search that got in may spend
        self._lock = threading.Lock()
        self._running: dict[int, int] = {}

    @contextmanager
    def enter(self, user_id: int) -> Iterator[None]:
        """Hold a place for the user's search, or raise LimitExceeded (429) at once."""
        with self._lock:
            mine = self._running.get(user_id, 0)
            if mine >= self.per_user or sum(self._running.values()) >= self.total:
                raise LimitExceeded(
                    "search_busy",
                    "Too many searches are running; retry in a moment.",
                    self.retry_after,
                    {"limit": self.per_user if mine >= self.per_user else self.total},
                )
            self._running[user_id] = mine + 1
        try:
            yield
        finally:
            with self._lock:
                left = self._running[user_id] - 1
                if left:
                    self._running[user_id] = left
                else:
                    del self._running[user_id]


class _Interrupted(Exception):
    """A window's statement ran past the search's deadline and was stopped."""


def search_sessions(
    db: Database,
    user_id: int,
    query: str,
    limit: int,
    after: tuple[datetime, str] | None,
    budget: SearchBudget,
) -> SearchPage:
    """Return a page of the user's sessions whose title or message text holds `query`.

    Case-insensitive (Unicode case folding), newest first, paged like `list_sessions`; each
    session has a `match`: where the words were found and a snippet around them.
    """
    needle = fold(query)
    deadline = time.monotonic() + budget.seconds
    found: list[tuple[Any, bool]] = []
    scanned, size, partial = 0, 1, False
    while True:
        if scanned >= budget.sessions or time.monotonic() >= deadline:
            partial = True
            break
        want = min(size, budget.sessions - scanned)
        try:
            rows = _window(db, user_id, needle, after, want, deadline)
        except _Interrupted:
            if scanned:
                partial = True
                break
            # Not even one session could be scanned in time: its messages are too many to
            # search within the budget, so it is tested by title alone and the walk goes on.
            want = 1
            rows = _window(db, user_id, needle, after, want, None, titles_only=True)
        for row in rows:
            scanned += 1
            after = (row.created_at, row.id)
            if row.hit:
                found.append((row, row.title_hit))
                if len(found) > limit:
                    break
        if len(found) > limit or len(rows) < want:
            break
        size = min(size * 2, MAX_WINDOW)
    page = found[:limit]
    if len(found) > limit:
        last = page[-1][0]
        next_key: tuple[datetime, str] | None = (last.created_at, last.id)
    else:
        next_key = after if partial else None
    # The snippets get a little more time of their own, so a page found late still has them.
    late = max(deadline, time.monotonic() + budget.seconds / 2)
    return SearchPage(_with_matches(db, needle, page, late), next_key, partial)


def _window(
    db: Database,
    user_id: int,
    needle: str,
    after: tuple[datetime, str] | None,
    size: int,
    deadline: float | None,
    titles_only: bool = False,
) -> list[Any]:
    """The next `size` sessions after `after`, each flagged whether it matches."""
    title_hit = func.coalesce(S.search_title.contains(needle, autoescape=True), False)
    in_text = (
        exists()
        .where(
            M.session_id == S.id,
            M.status != "discarded",
            M.search_text.contains(needle, autoescape=True),
        )
        .correlate(ChatSession.__table__)
    )
    hit = title_hit if titles_only else or_(title_hit, in_text)
    statement = select(
        S.id, S.created_at, S.updated_at, S.title, title_hit.label("title_hit"), hit.label("hit")
    ).where(S.user_id == user_id)
    if after is not None:
        statement = statement.where(tuple_(S.created_at, S.id) < tuple_(*after))
    statement = statement.order_by(*ORDER).limit(size)
    with db.begin_read() as conn, _stopped_at(conn, deadline):
        return list(conn.execute(statement))


@contextmanager
def _stopped_at(conn: Connection, deadline: float | None) -> Iterator[None]:
    """Stop the statements run inside at `deadline`: PostgreSQL's statement timeout, or
    SQLite's progress handler; raise _Interrupted when one was stopped."""
    if deadline is None:
        yield
        return
    if conn.dialect.name == "sqlite":
        driver = conn.connection.driver_connection
        assert isinstance(driver, sqlite3.Connection)  # the sqlite dialect's driver is sqlite3
        driver.set_progress_handler(lambda: int(time.monotonic() >= deadline), SQLITE_STEPS)
        try:
            yield
        except OperationalError as err:
            if time.monotonic() >= deadline and "interrupted" in str(err.orig):
                raise _Interrupted() from err
            raise
        finally:
            driver.set_progress_handler(None, 0)
        return
    millis = max(1, int((deadline - time.monotonic()) * 1000))
    conn.execute(select(func.set_config("statement_timeout", str(millis), True)))
    try:
        yield
    except OperationalError as err:
        if getattr(err.orig, "sqlstate", None) == PG_QUERY_CANCELED:
            raise _Interrupted() from err
        raise


def _with_matches(
    db: Database, needle: str, page: list[tuple[Any, bool]], deadline: float
) -> list[dict[str, Any]]:
    """The page's sessions in the API's form, each with where it matched and a snippet (empty
    for a message the deadline left no time to read)."""
    in_messages = [row.id for row, title_hit in page if not title_hit]
    contents: dict[str, Any] = {}
    if in_messages:
        first = (
            select(M.content)
            .where(
                M.session_id == S.id,
                M.status != "discarded",
                M.search_text.contains(needle, autoescape=True),
            )
            .order_by(M.position)
            .limit(1)
            .correlate(ChatSession.__table__)
            .scalar_subquery()
        )
        try:
            with db.begin_read() as conn, _stopped_at(conn, deadline):
                rows = conn.execute(select(S.id, first).where(S.id.in_(in_messages))).all()
                contents = {session_id: content for session_id, content in rows}
        except _Interrupted:
            contents = {}
    out = []
    for row, title_hit in page:
        if title_hit:
            match = {"in": "title", "snippet": row.title}
        else:
            match = {"in": "messages", "snippet": _snippet(text_of(contents.get(row.id)), needle)}
        out.append(
            {
                "id": row.id,
                "title": row.title,
                "created_at": iso(row.created_at),
                "updated_at": iso(row.updated_at),
                "match": match,
            }
        )
    return out


def _snippet(texts: list[str], needle: str) -> str:
    """The words around the first place `needle` (folded) is found in `texts`."""
    for text in texts:
        shown, folded, origin = _folded_with_origin(text)
        at = folded.find(needle)
        if at < 0:
            continue
        start = max(0, origin[at] - SNIPPET_CHARS // 2)
        end = min(len(shown), origin[at + len(needle) - 1] + 1 + SNIPPET_CHARS // 2)
        words = " ".join(shown[start:end].split())
        return ("…" if start else "") + words + ("…" if end < len(shown) else "")
    return " ".join(" ".join(texts).split())[:SNIPPET_CHARS]  # none, or stored before its fold


def _folded_with_origin(text: str) -> tuple[str, str, list[int]]:
    """`text` in NFKC, its fold (as models.searchable.fold), and where each folded
    character came from in the first."""
    shown = unicodedata.normalize("NFKC", text)
    folded: list[str] = []
    origin: list[int] = []
    for i, char in enumerate(shown):
        if char.isspace():
            if folded and folded[-1] != " ":
                folded.append(" ")
                origin.append(i)
            continue
        for part in char.casefold():
            folded.append(part)
            origin.append(i)
    if folded and folded[-1] == " ":
        folded.pop()
        origin.pop()
    return shown, "".join(folded), origin

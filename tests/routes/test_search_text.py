"""Every path that writes a message's text or a title keeps its searchable form, and migration
0009 fills it for rows written before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, select, text

from models import ChatSession, Message
from models.db import Database
from models.migrate import upgrade
from models.searchable import fold, search_text, search_title


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_fold_is_case_folded_whitespace_collapsed_text() -> None:
    assert fold("  Straße\tIN\n\nMAY  ") == "strasse in may"
    assert fold("\uff26\uff55\uff4c\uff4c \ufb01le") == "full file"  # NFKC: width and ligatures
    assert (
        search_text([{"type": "text", "text": "A  b"}, {"type": "text", "text": "C"}]) == "a b\nc"
    )
    assert (
        search_text([{"type": "tool_use", "id": "t", "name": "n", "input": {"type": "x"}}]) is None
    )
    assert search_title("x" * 300) == "x" * 200 and search_title(None) is None


def stored(db: Database, session_id: str) -> tuple[Any, list[Any]]:
    with db.read() as s:
        session = s.get(ChatSession, session_id)
        rows = s.scalars(
            select(Message).where(Message.session_id == session_id).order_by(Message.position)
        ).all()
        return session, list(rows)


def test_a_turns_messages_and_title_are_searchable_once_written(
    client: Any, user: tuple[int, str], db: Database
) -> None:
    auth = bearer(user[1])
    response = client.post(
        "/api/chat/stream", json={"message": "How are my BUDGETS doing?"}, headers=auth
    )
    response.get_data()
    sid = response.headers["X-Session-Id"]
    session, rows = stored(db, sid)
    assert session.search_title == "how are my budgets doing?"  # titled by its first question
    assert rows and all(r.status in ("complete", "incomplete") for r in rows)
    for row in rows:
        assert row.search_text == search_text(row.content), row.content
    answer = next(r for r in reversed(rows) if r.role == "assistant" and r.search_text)
    word = answer.search_text.split()[-1]
    found = client.get("/api/sessions", query_string={"q": word}, headers=auth).get_json()
    assert sid in [s["id"] for s in found["sessions"]]
    # A message sent while nothing runs, and one queued behind a running turn, alike.
    turn = client.post(
        f"/api/sessions/{sid}/turns", json={"message": "And  the RENT?"}, headers=auth
    )
    assert turn.status_code == 202
    client.get(turn.get_json()["events_url"]).get_data()
    _, rows = stored(db, sid)
    assert any(r.search_text == "and the rent?" for r in rows)
    # Renaming keeps the searchable title.
    client.patch(f"/api/sessions/{sid}", json={"title": "Ünïcode PLAN"}, headers=auth)
    assert stored(db, sid)[0].search_title == "ünïcode plan"
    created = client.post("/api/sessions", json={"title": "New  ONE"}, headers=auth).get_json()
    assert stored(db, created["id"])[0].search_title == "new one"


def test_migration_0009_fills_rows_written_before(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'old.db'}"
    upgrade(url, "0008")
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO users (id, name, created_at) VALUES (1, 'u', '2025-01-01')"))
        for n in range(2500):  # more than one batch
            conn.execute(
                text(
                    "INSERT INTO chat_sessions (id, user_id, title, created_at, updated_at) "
                    "VALUES (:id, 1, :title, '2025-01-01', '2025-01-01')"
                ),
                {"id": f"ses_{n:05d}", "title": None if n % 2 else f"Plan  NUMBER {n}"},
            )
        conn.execute(
            text(
                "INSERT INTO messages (id, session_id, position, role, content, status, "
                "created_at, updated_at) VALUES ('msg_1', 'ses_00001', 0, 'user', :c, "
                "'complete', '2025-01-01', '2025-01-01')"
            ),
            {"c": '[{"type": "text", "text": "Café  AU lait"}, {"type": "tool_use", "input": {}}]'},
        )
    engine.dispose()
    upgrade(url)
    engine = create_engine(url)
    with engine.connect() as conn:
        titles = dict(conn.execute(text("SELECT id, search_title FROM chat_sessions")).all())
        assert titles["ses_02498"] == "plan number 2498" and titles["ses_02499"] is None
        assert sum(t is not None for t in titles.values()) == 1250
        assert conn.scalar(text("SELECT search_text FROM messages")) == "café au lait"
    engine.dispose()

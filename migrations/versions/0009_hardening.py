"""Hardening: searchable text kept beside messages and titles; the event log's epoch.

`messages.search_text` and `chat_sessions.search_title` hold the case-folded text people
read (text blocks, the title), so search matches on the database side and never on stored
JSON keys; existing rows are filled here, in batches, and an index on a user's sessions by
(created_at, id) serves the walk newest first. `turns.log_epoch` numbers the generations of a turn's live event log: a worker
that finds the log lost (Redis restarted empty) starts the next one, whose event ids
begin above any id a client could hold.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-27 21:30:00.000000
"""

import unicodedata
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


BATCH = 1000
_messages = sa.table(
    "messages",
    sa.column("id", sa.String),
    sa.column("content", sa.JSON),
    sa.column("search_text", sa.Text),
)
_sessions = sa.table(
    "chat_sessions",
    sa.column("id", sa.String),
    sa.column("title", sa.String),
    sa.column("search_title", sa.String),
)


def _fold(text: str) -> str:
    # A copy of models.searchable.fold as it was when this revision was written.
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def _search_text(content: Any) -> str | None:
    if isinstance(content, str):
        texts = [content]
    else:
        texts = [
            b["text"]
            for b in content or []
            if isinstance(b, dict) and b.get("type") == "text" and b.get("text")
        ]
    return "\n".join(f for f in (_fold(t) for t in texts) if f) or None


def _search_title(title: str | None) -> str | None:
    return (_fold(title)[:200] or None) if title else None


def _backfill(table: Any, source: str, target: str, fill: Any) -> None:
    """Fill `target` from `source` for every row, `BATCH` rows per statement, by id."""
    conn = op.get_bind()
    c = table.c
    update = (
        table.update().where(c.id == sa.bindparam("_id")).values({target: sa.bindparam("_value")})
    )
    last = ""
    while True:
        rows = conn.execute(
            sa.select(c.id, c[source]).where(c.id > last).order_by(c.id).limit(BATCH)
        ).all()
        if not rows:
            return
        values = [{"_id": row[0], "_value": fill(row[1])} for row in rows]
        filled = [v for v in values if v["_value"] is not None]
        if filled:
            conn.execute(update, filled)
        last = rows[-1][0]


def upgrade() -> None:
    """Apply this revision."""
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.add_column(sa.Column("search_text", sa.Text(), nullable=True))
    with op.batch_alter_table("chat_sessions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("search_title", sa.String(length=200), nullable=True))
        # Search and the list walk a user's sessions newest first by (created_at, id).
        batch_op.create_index(
            "ix_chat_sessions_user_created", ["user_id", "created_at", "id"], unique=False
        )
    _backfill(_messages, "content", "search_text", _search_text)
    _backfill(_sessions, "title", "search_title", _search_title)
    with op.batch_alter_table("turns", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("log_epoch", sa.Integer(), server_default="0", nullable=False)
        )


def downgrade() -> None:
    """Revert this revision."""
    with op.batch_alter_table("turns", schema=None) as batch_op:
        batch_op.drop_column("log_epoch")
    with op.batch_alter_table("chat_sessions", schema=None) as batch_op:
        batch_op.drop_index("ix_chat_sessions_user_created")
        batch_op.drop_column("search_title")
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.drop_column("search_text")

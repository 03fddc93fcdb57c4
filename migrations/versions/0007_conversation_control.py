"""Conversation control: message trees, queued turns, approvals of side-effect tools.

Messages get a parent (a session's messages form a tree; the session keeps its active
leaf); turns get the question they answer, the paused turn they continue and whether a
queued message joins the branch's end; tool runs get their approval. Existing sessions
become one branch: each message's parent is the one before it.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-25 19:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

DATETIME = sa.DateTime(timezone=True)


def upgrade() -> None:
    """Apply this revision."""
    with op.batch_alter_table("chat_sessions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("active_leaf_id", sa.String(length=32), nullable=True))
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.add_column(sa.Column("parent_id", sa.String(length=32), nullable=True))
        batch_op.add_column(sa.Column("client_id", sa.String(length=100), nullable=True))
        batch_op.create_index("ix_messages_parent_id", ["parent_id"], unique=False)
    with op.batch_alter_table("turns", schema=None) as batch_op:
        batch_op.alter_column(
            "status", existing_type=sa.String(length=16), type_=sa.String(length=24)
        )
        batch_op.add_column(sa.Column("question_id", sa.String(length=32), nullable=True))
        batch_op.add_column(sa.Column("continues", sa.String(length=32), nullable=True))
        batch_op.add_column(
            sa.Column("to_leaf", sa.Boolean(), server_default=sa.true(), nullable=False)
        )
        batch_op.create_index(
            "ix_turns_queued",
            ["session_id", "created_at"],
            unique=False,
            sqlite_where=sa.text("status = 'queued'"),
            postgresql_where=sa.text("status = 'queued'"),
        )
    with op.batch_alter_table("tool_runs", schema=None) as batch_op:
        batch_op.alter_column(
            "status",
            existing_type=sa.String(length=16),
            type_=sa.String(length=24),
            existing_server_default="done",
        )
        batch_op.add_column(sa.Column("requested_in", sa.String(length=32), nullable=True))
        batch_op.add_column(sa.Column("preview", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("approval", sa.String(length=16), nullable=True))
        batch_op.add_column(sa.Column("decided_by", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("decided_at", DATETIME, nullable=True))
        batch_op.add_column(sa.Column("reason", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("finished_at", DATETIME, nullable=True))
        batch_op.create_index(
            "ix_tool_runs_awaiting",
            ["created_at"],
            unique=False,
            sqlite_where=sa.text("status = 'awaiting_approval'"),
            postgresql_where=sa.text("status = 'awaiting_approval'"),
        )
    _one_branch_per_session()


def _one_branch_per_session() -> None:
    """Chain each session's shown messages in order; its last one is the active leaf."""
    conn = op.get_bind()
    messages = sa.table(
        "messages",
        sa.column("id", sa.String),
        sa.column("session_id", sa.String),
        sa.column("position", sa.Integer),
        sa.column("status", sa.String),
        sa.column("parent_id", sa.String),
    )
    sessions = sa.table(
        "chat_sessions", sa.column("id", sa.String), sa.column("active_leaf_id", sa.String)
    )
    rows = conn.execute(
        sa.select(messages.c.id, messages.c.session_id, messages.c.status).order_by(
            messages.c.session_id, messages.c.position
        )
    ).all()
    last: dict[str, str] = {}
    for ident, session_id, status in rows:
        parent = last.get(session_id)
        if parent is not None:
            conn.execute(messages.update().where(messages.c.id == ident).values(parent_id=parent))
        # A discarded attempt is a dead end: the next message follows the one before it.
        if status != "discarded":
            last[session_id] = ident
    for session_id, leaf in last.items():
        conn.execute(
            sessions.update().where(sessions.c.id == session_id).values(active_leaf_id=leaf)
        )


def downgrade() -> None:
    """Revert this revision."""
    with op.batch_alter_table("tool_runs", schema=None) as batch_op:
        batch_op.drop_index(
            "ix_tool_runs_awaiting",
            sqlite_where=sa.text("status = 'awaiting_approval'"),
            postgresql_where=sa.text("status = 'awaiting_approval'"),
        )
        for column in (
            "finished_at",
            "reason",
            "decided_at",
            "decided_by",
            "approval",
            "preview",
            "requested_in",
        ):
            batch_op.drop_column(column)
        batch_op.alter_column(
            "status",
            existing_type=sa.String(length=24),
            type_=sa.String(length=16),
            existing_server_default="done",
        )
    with op.batch_alter_table("turns", schema=None) as batch_op:
        batch_op.drop_index(
            "ix_turns_queued",
            sqlite_where=sa.text("status = 'queued'"),
            postgresql_where=sa.text("status = 'queued'"),
        )
        for column in ("to_leaf", "continues", "question_id"):
            batch_op.drop_column(column)
        batch_op.alter_column(
            "status", existing_type=sa.String(length=24), type_=sa.String(length=16)
        )
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.drop_index("ix_messages_parent_id")
        batch_op.drop_column("client_id")
        batch_op.drop_column("parent_id")
    with op.batch_alter_table("chat_sessions", schema=None) as batch_op:
        batch_op.drop_column("active_leaf_id")

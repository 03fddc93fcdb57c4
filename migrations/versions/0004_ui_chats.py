"""AI SDK chats: (user, client chat id) -> session.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23 12:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.create_table(
        "ui_chats",
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("chat_id", sa.String(length=128), nullable=False),
        sa.Column("session_id", sa.String(length=32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["chat_sessions.id"],
            name=op.f("fk_ui_chats_session_id_chat_sessions"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_ui_chats_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("user_id", "chat_id", name=op.f("pk_ui_chats")),
    )
    with op.batch_alter_table("ui_chats", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_ui_chats_session_id"), ["session_id"], unique=False)


def downgrade() -> None:
    """Revert this revision."""
    with op.batch_alter_table("ui_chats", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_ui_chats_session_id"))
    op.drop_table("ui_chats")

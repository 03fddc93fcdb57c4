"""Answers to look at: what the page and the list need of sessions and messages.

Reserved in the chain so that work on charts and the page can land in any order; its columns are added here, if any.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-28 00:30:00.000000
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Index the sessions by last activity: the list shows the most recently active first."""
    op.create_index(
        "ix_chat_sessions_user_updated", "chat_sessions", ["user_id", "updated_at", "id"]
    )


def downgrade() -> None:
    """Drop the index of sessions by last activity."""
    op.drop_index("ix_chat_sessions_user_updated", table_name="chat_sessions")

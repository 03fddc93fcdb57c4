"""Hardening: searchable text kept beside messages and titles; the event log's epoch.

`messages.search_text` and `chat_sessions.search_title` hold the case-folded text people
read (text blocks, the title), so search matches on the database side and never on stored
JSON keys. `turns.log_epoch` numbers the generations of a turn's live event log: a worker
that finds the log lost (Redis restarted empty) starts the next one, whose event ids
begin above any id a client could hold.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-27 21:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.add_column(sa.Column("search_text", sa.Text(), nullable=True))
    with op.batch_alter_table("chat_sessions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("search_title", sa.String(length=200), nullable=True))
    with op.batch_alter_table("turns", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("log_epoch", sa.Integer(), server_default="0", nullable=False)
        )


def downgrade() -> None:
    """Revert this revision."""
    with op.batch_alter_table("turns", schema=None) as batch_op:
        batch_op.drop_column("log_epoch")
    with op.batch_alter_table("chat_sessions", schema=None) as batch_op:
        batch_op.drop_column("search_title")
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.drop_column("search_text")

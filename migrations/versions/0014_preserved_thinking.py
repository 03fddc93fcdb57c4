"""Preserved thinking: what a conversation sends, stored with it (issue 36).

A session keeps its own `system` and `tools` as first sent (`sent_prompt`, canonical JSON)
and whether its requests drop thinking blocks bound to a changed prefix (`drop_blocks`); an
assistant message keeps the system messages sent right before it (`preamble`: a new date,
tool changes); a turn counts the thinking blocks the API dropped (`dropped_blocks`). Sessions
from before have no copy: theirs is made on their next turn.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-29 02:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add the conversation's copy and binding flag, a message's notes, a turn's drops."""
    with op.batch_alter_table("chat_sessions") as batch:
        batch.add_column(sa.Column("sent_prompt", sa.Text(), nullable=True))
        batch.add_column(
            sa.Column("drop_blocks", sa.Boolean(), server_default=sa.false(), nullable=False)
        )
    with op.batch_alter_table("messages") as batch:
        batch.add_column(sa.Column("preamble", sa.JSON(), nullable=True))
    with op.batch_alter_table("turns") as batch:
        batch.add_column(
            sa.Column("dropped_blocks", sa.Integer(), server_default="0", nullable=False)
        )


def downgrade() -> None:
    """Drop them again."""
    with op.batch_alter_table("turns") as batch:
        batch.drop_column("dropped_blocks")
    with op.batch_alter_table("messages") as batch:
        batch.drop_column("preamble")
    with op.batch_alter_table("chat_sessions") as batch:
        batch.drop_column("drop_blocks")
        batch.drop_column("sent_prompt")

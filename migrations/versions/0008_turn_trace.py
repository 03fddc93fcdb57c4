"""Turns: the trace context a turn started in.

The worker that takes a turn over continues the trace the turn started in, so one trace
tells the whole turn however many workers ran it.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-25 19:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    with op.batch_alter_table("turns", schema=None) as batch_op:
        batch_op.add_column(sa.Column("traceparent", sa.String(length=64), nullable=True))


def downgrade() -> None:
    """Revert this revision."""
    with op.batch_alter_table("turns", schema=None) as batch_op:
        batch_op.drop_column("traceparent")

"""Tool runs: the lease that claimed each one.

A claim whose commit was lost with its connection is retried by its own lease holder, which
must tell its own claim (run the tool) from one left by a dead holder (never run it again).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-25 17:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    with op.batch_alter_table("tool_runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("lease", sa.Integer(), nullable=True))


def downgrade() -> None:
    """Revert this revision."""
    with op.batch_alter_table("tool_runs", schema=None) as batch_op:
        batch_op.drop_column("lease")

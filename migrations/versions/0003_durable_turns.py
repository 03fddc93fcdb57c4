"""Durable turns: workers with heartbeats, fenced turn leases, tool run claims.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23 12:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.create_table(
        "workers",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("host", sa.String(length=200), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_workers")),
    )
    with op.batch_alter_table("turns", schema=None) as batch_op:
        batch_op.add_column(sa.Column("worker_id", sa.String(length=40), nullable=True))
        batch_op.add_column(sa.Column("lease", sa.Integer(), server_default="1", nullable=False))
        for column in ("takeovers", "progress", "stalls"):
            batch_op.add_column(sa.Column(column, sa.Integer(), server_default="0", nullable=False))
        batch_op.drop_column("heartbeat_at")
        batch_op.create_index(
            "ix_turns_running_worker",
            ["worker_id"],
            unique=False,
            sqlite_where=sa.text("status = 'running'"),
            postgresql_where=sa.text("status = 'running'"),
        )
    with op.batch_alter_table("tool_runs", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("status", sa.String(length=16), server_default="done", nullable=False)
        )


def downgrade() -> None:
    """Revert this revision."""
    with op.batch_alter_table("tool_runs", schema=None) as batch_op:
        batch_op.drop_column("status")
    with op.batch_alter_table("turns", schema=None) as batch_op:
        batch_op.drop_index("ix_turns_running_worker")
        for column in ("stalls", "progress", "takeovers"):
            batch_op.drop_column(column)
        batch_op.drop_column("lease")
        batch_op.drop_column("worker_id")
        batch_op.add_column(
            sa.Column(
                "heartbeat_at",
                sa.DateTime(timezone=True),
                server_default=sa.func.now(),
                nullable=False,
            )
        )
    op.drop_table("workers")

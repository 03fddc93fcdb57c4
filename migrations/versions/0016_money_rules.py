"""Money in and out: transfer and refund marks, recurring series (issue 38).

A transaction carries the user's correction of what it is (`flow_mark`: a transfer or not, a
refund or not), which the money rule obeys; the other leg of a transfer is looked up by its
amount; the user's word on a detected recurring series (confirmed or dismissed, its name) is
kept by the series' id.

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-29 02:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

MARKS = "flow_mark IN ('transfer', 'not_transfer', 'refund', 'not_refund')"


def upgrade() -> None:
    """Apply this revision."""
    with op.batch_alter_table("transactions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("flow_mark", sa.String(length=16), nullable=True))
        batch_op.create_check_constraint(op.f("ck_transactions_flow_mark"), MARKS)
        batch_op.create_index(
            "ix_transactions_user_amount", ["user_id", "amount_minor"], unique=False
        )

    op.create_table(
        "recurring_choices",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("series_id", sa.String(length=32), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=True),
        sa.Column("name", sa.String(length=120), nullable=True),
        sa.CheckConstraint(
            "status IN ('confirmed', 'dismissed')", name=op.f("ck_recurring_choices_status")
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_recurring_choices_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_recurring_choices")),
        sa.UniqueConstraint("user_id", "series_id", name=op.f("uq_recurring_choices_user_id")),
    )


def downgrade() -> None:
    """Revert this revision."""
    op.drop_table("recurring_choices")
    with op.batch_alter_table("transactions", schema=None) as batch_op:
        batch_op.drop_index("ix_transactions_user_amount")
        batch_op.drop_constraint(op.f("ck_transactions_flow_mark"), type_="check")
        batch_op.drop_column("flow_mark")

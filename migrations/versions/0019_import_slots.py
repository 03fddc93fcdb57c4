"""Upload places: a user's running statement uploads, counted across worker processes.

A row per place held (user, slot 0 .. IMPORT_CONCURRENCY - 1): an upload takes a free place
by inserting its row, which the primary key refuses when another worker holds it; it deletes
the row when it ends, and a row past `expires_at` (its worker was killed) is taken over.

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-29 13:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.create_table(
        "import_slots",
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("slot", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("holder", sa.String(length=80), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_import_slots_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("user_id", "slot", name=op.f("pk_import_slots")),
    )


def downgrade() -> None:
    """Revert this revision."""
    op.drop_table("import_slots")

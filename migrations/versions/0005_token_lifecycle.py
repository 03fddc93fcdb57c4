"""API tokens: names, expiry, revocation and last use.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23 16:40:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    with op.batch_alter_table("api_tokens", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("name", sa.String(length=100), server_default="token", nullable=False)
        )
        batch_op.add_column(sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.create_index(batch_op.f("ix_api_tokens_expires_at"), ["expires_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_api_tokens_revoked_at"), ["revoked_at"], unique=False)


def downgrade() -> None:
    """Revert this revision."""
    with op.batch_alter_table("api_tokens", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_api_tokens_revoked_at"))
        batch_op.drop_index(batch_op.f("ix_api_tokens_expires_at"))
        batch_op.drop_column("last_used_at")
        batch_op.drop_column("revoked_at")
        batch_op.drop_column("expires_at")
        batch_op.drop_column("name")

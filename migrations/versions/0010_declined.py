"""One word for a decline: stored approvals `denied` become `declined`.

The page, the docs and the API say "declined"; a decision's stored value now says it too.
Data only: no column changes.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-28 10:00:00.000000
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.execute("UPDATE tool_runs SET approval = 'declined' WHERE approval = 'denied'")


def downgrade() -> None:
    """Revert this revision."""
    op.execute("UPDATE tool_runs SET approval = 'denied' WHERE approval = 'declined'")

"""Statements imported with review: drafts, their rows, mappings and category rules.

Reserved in the chain so that work on statement imports can land in any order; its tables are added here.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-28 00:30:00.000000
"""

from collections.abc import Sequence

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""


def downgrade() -> None:
    """Revert this revision."""

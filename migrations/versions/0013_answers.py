"""Answers to look at: what the page and the list need of sessions and messages.

Reserved in the chain so that work on charts and the page can land in any order; its columns are added here, if any.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-28 00:30:00.000000
"""

from collections.abc import Sequence

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""


def downgrade() -> None:
    """Revert this revision."""

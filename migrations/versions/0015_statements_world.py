"""Statements from the real world: import progress, file identity, indexes for undo (issue 37).

Reserved in the chain so that parallel work can land in any order; its tables and columns are
added here.

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-29 02:00:00.000000
"""

from collections.abc import Sequence

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Nothing yet."""


def downgrade() -> None:
    """Nothing yet."""

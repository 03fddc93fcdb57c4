"""Tool sources: MCP servers' calls, per-user credentials, approvals for a session.

Reserved in the chain so that work on tool sources can land in any order; its tables are added here.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-28 00:30:00.000000
"""

from collections.abc import Sequence

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""


def downgrade() -> None:
    """Revert this revision."""

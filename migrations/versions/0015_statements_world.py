"""Statements from the real world: import progress, file identity, indexes for undo (issue 37).

An import has a status while it is written in short transactions (`drafting`, `committing`,
`undoing`, beside `draft`, `committed`, `undone`), the rows done of its total, when it last
moved (a worker that died leaves it still, then a retry resumes or undoes it), where a commit
resumes, and the SHA-256 of its file (the same file again goes where it went before). Undo
deletes transactions, and each delete walks `import_rows.matched_transaction_id` (its foreign
key's SET NULL): that column gets an index. A commit reads a statement's rows a batch at a
time in id order: (import_id, statement, id) gives each batch without sorting them all.

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-29 02:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD = "status IN ('draft', 'committed', 'undone')"
NEW = "status IN ('drafting', 'draft', 'committing', 'committed', 'undoing', 'undone')"


def upgrade() -> None:
    """Apply this revision."""
    with op.batch_alter_table("imports", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_imports_status"), type_="check")
        batch_op.create_check_constraint(op.f("ck_imports_status"), NEW)
        batch_op.add_column(sa.Column("sha256", sa.String(length=64), nullable=True))
        batch_op.add_column(
            sa.Column("rows_done", sa.Integer(), nullable=False, server_default="0")
        )
        batch_op.add_column(
            sa.Column("rows_total", sa.Integer(), nullable=False, server_default="0")
        )
        batch_op.add_column(sa.Column("resume_after", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("moved_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.create_index("ix_imports_user_sha256", ["user_id", "sha256"], unique=False)
    with op.batch_alter_table("import_rows", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_import_rows_matched_transaction_id"),
            ["matched_transaction_id"],
            unique=False,
        )
        batch_op.create_index(
            "ix_import_rows_import_statement", ["import_id", "statement", "id"], unique=False
        )


def downgrade() -> None:
    """Revert this revision (imports caught mid-way become drafts, committed or undone)."""
    op.execute("UPDATE imports SET status = 'draft' WHERE status = 'drafting'")
    op.execute("UPDATE imports SET status = 'committed' WHERE status = 'committing'")
    op.execute("UPDATE imports SET status = 'undone' WHERE status = 'undoing'")
    with op.batch_alter_table("import_rows", schema=None) as batch_op:
        batch_op.drop_index("ix_import_rows_import_statement")
        batch_op.drop_index(batch_op.f("ix_import_rows_matched_transaction_id"))
    with op.batch_alter_table("imports", schema=None) as batch_op:
        batch_op.drop_index("ix_imports_user_sha256")
        batch_op.drop_column("moved_at")
        batch_op.drop_column("resume_after")
        batch_op.drop_column("rows_total")
        batch_op.drop_column("rows_done")
        batch_op.drop_column("sha256")
        batch_op.drop_constraint(op.f("ck_imports_status"), type_="check")
        batch_op.create_check_constraint(op.f("ck_imports_status"), OLD)

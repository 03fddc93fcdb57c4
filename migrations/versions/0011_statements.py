"""Statements imported with review: drafts, their rows, saved CSV mappings, category rules.

An import is a draft of parsed rows (status new, duplicate, possible_duplicate or invalid) the
user reviews, then commits as transactions linked to it (undo deletes exactly those); accounts
carry the bank's account number so a statement finds its account again.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-28 00:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.create_table(
        "imports",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("format", sa.String(length=16), nullable=False),
        sa.Column("filename", sa.String(length=255), nullable=False),
        sa.Column("statements", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("committed_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            "status IN ('draft', 'committed', 'undone')", name=op.f("ck_imports_status")
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_imports_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_imports")),
    )
    with op.batch_alter_table("imports", schema=None) as batch_op:
        batch_op.create_index("ix_imports_user_created", ["user_id", "id"], unique=False)

    with op.batch_alter_table("accounts", schema=None) as batch_op:
        batch_op.add_column(sa.Column("bank_ref", sa.String(length=64), nullable=True))
        batch_op.create_index("ix_accounts_user_bank_ref", ["user_id", "bank_ref"], unique=False)

    with op.batch_alter_table("transactions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("import_id", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("bank_id", sa.String(length=255), nullable=True))
        batch_op.create_index(
            "ix_transactions_account_posted", ["account_id", "posted_on"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_transactions_import_id"), ["import_id"], unique=False)
        batch_op.create_foreign_key(
            batch_op.f("fk_transactions_import_id_imports"),
            "imports",
            ["import_id"],
            ["id"],
            ondelete="SET NULL",
        )

    op.create_table(
        "import_mappings",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("columns", sa.JSON(), nullable=False),
        sa.Column("mapping", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name=op.f("fk_import_mappings_account_id_accounts"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_import_mappings_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_import_mappings")),
        sa.UniqueConstraint("user_id", "account_id", name=op.f("uq_import_mappings_user_id")),
    )
    with op.batch_alter_table("import_mappings", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_import_mappings_account_id"), ["account_id"], unique=False
        )

    op.create_table(
        "import_rows",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("import_id", sa.Integer(), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=True),
        sa.Column("statement", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("posted_on", sa.Date(), nullable=True),
        sa.Column("amount_minor", sa.BigInteger(), nullable=True),
        sa.Column("currency", sa.String(length=3), nullable=False),
        sa.Column("merchant", sa.String(length=120), nullable=False),
        sa.Column("description", sa.String(length=255), nullable=False),
        sa.Column("bank_id", sa.String(length=255), nullable=True),
        sa.Column("status", sa.String(length=24), nullable=False),
        sa.Column("reason", sa.String(length=255), nullable=True),
        sa.Column("include", sa.Boolean(), nullable=False),
        sa.Column("category", sa.String(length=80), nullable=True),
        sa.Column("matched_transaction_id", sa.Integer(), nullable=True),
        sa.CheckConstraint(
            "status IN ('new', 'duplicate', 'possible_duplicate', 'invalid')",
            name=op.f("ck_import_rows_status"),
        ),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name=op.f("fk_import_rows_account_id_accounts"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["import_id"],
            ["imports.id"],
            name=op.f("fk_import_rows_import_id_imports"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["matched_transaction_id"],
            ["transactions.id"],
            name=op.f("fk_import_rows_matched_transaction_id_transactions"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_import_rows")),
    )
    with op.batch_alter_table("import_rows", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_import_rows_account_id"), ["account_id"], unique=False)
        batch_op.create_index(
            "ix_import_rows_import_status", ["import_id", "status", "id"], unique=False
        )

    op.create_table(
        "category_rules",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("category_id", sa.Integer(), nullable=False),
        sa.Column("payee_contains", sa.String(length=120), nullable=True),
        sa.Column("min_amount", sa.Numeric(precision=20, scale=4), nullable=True),
        sa.Column("max_amount", sa.Numeric(precision=20, scale=4), nullable=True),
        sa.CheckConstraint(
            "payee_contains IS NOT NULL OR min_amount IS NOT NULL OR max_amount IS NOT NULL",
            name=op.f("ck_category_rules_condition"),
        ),
        sa.ForeignKeyConstraint(
            ["category_id"],
            ["categories.id"],
            name=op.f("fk_category_rules_category_id_categories"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_category_rules_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_category_rules")),
    )
    with op.batch_alter_table("category_rules", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_category_rules_category_id"), ["category_id"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_category_rules_user_id"), ["user_id"], unique=False)


def downgrade() -> None:
    """Revert this revision."""
    with op.batch_alter_table("category_rules", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_category_rules_user_id"))
        batch_op.drop_index(batch_op.f("ix_category_rules_category_id"))

    op.drop_table("category_rules")
    with op.batch_alter_table("transactions", schema=None) as batch_op:
        batch_op.drop_constraint(
            batch_op.f("fk_transactions_import_id_imports"), type_="foreignkey"
        )
        batch_op.drop_index(batch_op.f("ix_transactions_import_id"))
        batch_op.drop_index("ix_transactions_account_posted")
        batch_op.drop_column("bank_id")
        batch_op.drop_column("import_id")

    with op.batch_alter_table("accounts", schema=None) as batch_op:
        batch_op.drop_index("ix_accounts_user_bank_ref")
        batch_op.drop_column("bank_ref")

    with op.batch_alter_table("import_rows", schema=None) as batch_op:
        batch_op.drop_index("ix_import_rows_import_status")
        batch_op.drop_index(batch_op.f("ix_import_rows_account_id"))

    op.drop_table("import_rows")
    with op.batch_alter_table("import_mappings", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_import_mappings_account_id"))

    op.drop_table("import_mappings")
    with op.batch_alter_table("imports", schema=None) as batch_op:
        batch_op.drop_index("ix_imports_user_created")

    op.drop_table("imports")

"""Finance: accounts, categories, transactions and budgets.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22 02:25:51.661447
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.create_table(
        "accounts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=80), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("currency", sa.String(length=3), nullable=False),
        sa.Column("balance_minor", sa.BigInteger(), nullable=False),
        sa.CheckConstraint(
            "kind IN ('checking', 'savings', 'credit_card')", name=op.f("ck_accounts_kind")
        ),
        sa.CheckConstraint("length(currency) = 3", name=op.f("ck_accounts_currency")),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_accounts_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_accounts")),
        sa.UniqueConstraint("user_id", "name", name=op.f("uq_accounts_user_id")),
    )
    op.create_table(
        "categories",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=80), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.CheckConstraint(
            "kind IN ('income', 'expense', 'transfer')", name=op.f("ck_categories_kind")
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_categories_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_categories")),
        sa.UniqueConstraint("user_id", "name", name=op.f("uq_categories_user_id")),
    )
    op.create_table(
        "budgets",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("category_id", sa.Integer(), nullable=False),
        sa.Column("month", sa.Date(), nullable=True),
        sa.Column("limit_minor", sa.BigInteger(), nullable=False),
        sa.Column("currency", sa.String(length=3), nullable=False),
        sa.CheckConstraint("length(currency) = 3", name=op.f("ck_budgets_currency")),
        sa.CheckConstraint("limit_minor >= 0", name=op.f("ck_budgets_limit_minor")),
        sa.ForeignKeyConstraint(
            ["category_id"],
            ["categories.id"],
            name=op.f("fk_budgets_category_id_categories"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_budgets_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_budgets")),
        sa.UniqueConstraint("user_id", "category_id", "month", name=op.f("uq_budgets_user_id")),
    )
    with op.batch_alter_table("budgets", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_budgets_category_id"), ["category_id"], unique=False)
        batch_op.create_index(
            "uq_budgets_recurring",
            ["user_id", "category_id"],
            unique=True,
            sqlite_where=sa.text("month IS NULL"),
            postgresql_where=sa.text("month IS NULL"),
        )

    op.create_table(
        "transactions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("posted_on", sa.Date(), nullable=False),
        sa.Column("amount_minor", sa.BigInteger(), nullable=False),
        sa.Column("currency", sa.String(length=3), nullable=False),
        sa.Column("merchant", sa.String(length=120), nullable=False),
        sa.Column("description", sa.String(length=255), nullable=False),
        sa.Column("category_id", sa.Integer(), nullable=True),
        sa.Column("pending", sa.Boolean(), nullable=False),
        sa.CheckConstraint("length(currency) = 3", name=op.f("ck_transactions_currency")),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name=op.f("fk_transactions_account_id_accounts"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["category_id"],
            ["categories.id"],
            name=op.f("fk_transactions_category_id_categories"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_transactions_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_transactions")),
    )
    with op.batch_alter_table("transactions", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_transactions_account_id"), ["account_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_transactions_category_id"), ["category_id"], unique=False
        )
        batch_op.create_index(
            "ix_transactions_user_category_posted",
            ["user_id", "category_id", "posted_on"],
            unique=False,
        )
        batch_op.create_index(
            "ix_transactions_user_merchant", ["user_id", "merchant"], unique=False
        )
        batch_op.create_index("ix_transactions_user_posted", ["user_id", "posted_on"], unique=False)


def downgrade() -> None:
    """Revert this revision."""
    with op.batch_alter_table("transactions", schema=None) as batch_op:
        batch_op.drop_index("ix_transactions_user_posted")
        batch_op.drop_index("ix_transactions_user_merchant")
        batch_op.drop_index("ix_transactions_user_category_posted")
        batch_op.drop_index(batch_op.f("ix_transactions_category_id"))
        batch_op.drop_index(batch_op.f("ix_transactions_account_id"))

    op.drop_table("transactions")
    with op.batch_alter_table("budgets", schema=None) as batch_op:
        batch_op.drop_index(
            "uq_budgets_recurring",
            sqlite_where=sa.text("month IS NULL"),
            postgresql_where=sa.text("month IS NULL"),
        )
        batch_op.drop_index(batch_op.f("ix_budgets_category_id"))

    op.drop_table("budgets")
    op.drop_table("categories")
    op.drop_table("accounts")

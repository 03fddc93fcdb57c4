"""Rows written in bulk: CHECKs SQLite evaluates without a temporary index, one index fewer.

A draft inserts its rows into `import_rows` and a commit copies them into `transactions`,
100,000 at a time for a large file. SQLite checks `x IN ('a', 'b', 'c', ...)` (more than two
values) by building a temporary index of the list for every row it writes: several
microseconds a row, more than the row's own insert. The two CHECKs those rows meet,
`import_rows.status` and `transactions.flow_mark`, become equalities joined by OR, which
accept and refuse exactly the same values (NULL passes either way). `ix_transactions_account_id`
goes: `ix_transactions_account_posted` (account_id, posted_on) leads with the same column and
serves the foreign key's cascade and every query by account, and each row written or deleted
paid for both.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-29 12:00:00.000000
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ROW_STATUSES = ("new", "duplicate", "possible_duplicate", "invalid")
FLOW_MARKS = ("transfer", "not_transfer", "refund", "not_refund")


def _in(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


def _or(column: str, values: tuple[str, ...]) -> str:
    return " OR ".join(f"{column} = {v!r}" for v in values)


def upgrade() -> None:
    """Apply this revision."""
    with op.batch_alter_table("import_rows", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_import_rows_status"), type_="check")
        batch_op.create_check_constraint(op.f("ck_import_rows_status"), _or("status", ROW_STATUSES))
    with op.batch_alter_table("transactions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_transactions_account_id"))
        batch_op.drop_constraint(op.f("ck_transactions_flow_mark"), type_="check")
        batch_op.create_check_constraint(
            op.f("ck_transactions_flow_mark"), _or("flow_mark", FLOW_MARKS)
        )


def downgrade() -> None:
    """Revert this revision."""
    with op.batch_alter_table("transactions", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_transactions_flow_mark"), type_="check")
        batch_op.create_check_constraint(
            op.f("ck_transactions_flow_mark"), _in("flow_mark", FLOW_MARKS)
        )
        batch_op.create_index(
            batch_op.f("ix_transactions_account_id"), ["account_id"], unique=False
        )
    with op.batch_alter_table("import_rows", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_import_rows_status"), type_="check")
        batch_op.create_check_constraint(op.f("ck_import_rows_status"), _in("status", ROW_STATUSES))

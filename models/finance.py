"""Personal finance: accounts, categories, transactions and budgets (money in minor units)."""

from __future__ import annotations

from datetime import date

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    ForeignKey,
    Index,
    String,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from models.base import Base, any_of

ACCOUNT_KINDS = ("checking", "savings", "credit_card")
# "transfer" marks moves between the user's own accounts, which are neither income nor spending.
CATEGORY_KINDS = ("income", "expense", "transfer")
# The user's correction of what a transaction is, which the money rule obeys
# (tools/finance/flows.py): a transfer or not, a refund or not.
FLOW_MARKS = ("transfer", "not_transfer", "refund", "not_refund")
# The user's word on a detected recurring series (tools/finance/recurring.py).
SERIES_STATUSES = ("confirmed", "dismissed")


def _one_of(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


class Account(Base):
    """A bank account or card; `balance_minor` is the posted balance in minor units."""

    __tablename__ = "accounts"
    # The unique (user_id, name) constraint doubles as the index on user_id.
    __table_args__ = (
        UniqueConstraint("user_id", "name"),
        Index("ix_accounts_user_bank_ref", "user_id", "bank_ref"),
        CheckConstraint(_one_of("kind", ACCOUNT_KINDS), name="kind"),
        CheckConstraint("length(currency) = 3", name="currency"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(80))
    kind: Mapped[str] = mapped_column(String(16))
    currency: Mapped[str] = mapped_column(String(3))
    balance_minor: Mapped[int] = mapped_column(BigInteger, default=0)
    # The bank's own account number (OFX ACCTID, CAMT IBAN, MT940 :25:): a statement's
    # rows land in the account that holds it.
    bank_ref: Mapped[str | None] = mapped_column(String(64))


class Category(Base):
    """A spending or income category, named uniquely per user."""

    __tablename__ = "categories"
    __table_args__ = (
        UniqueConstraint("user_id", "name"),
        CheckConstraint(_one_of("kind", CATEGORY_KINDS), name="kind"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(80))
    kind: Mapped[str] = mapped_column(String(16), default="expense")


class Transaction(Base):
    """One posted or pending movement: negative `amount_minor` is money out."""

    __tablename__ = "transactions"
    # Every finance query filters on user_id first, so each index leads with it
    # and a separate user_id index would be redundant.
    __table_args__ = (
        Index("ix_transactions_user_posted", "user_id", "posted_on"),
        Index("ix_transactions_user_category_posted", "user_id", "category_id", "posted_on"),
        Index("ix_transactions_user_merchant", "user_id", "merchant"),
        # Duplicate lookup at import: an account's rows over the statement's dates.
        Index("ix_transactions_account_posted", "account_id", "posted_on"),
        # The other leg of a transfer is found by its amount (tools/finance/flows.py).
        Index("ix_transactions_user_amount", "user_id", "amount_minor"),
        CheckConstraint("length(currency) = 3", name="currency"),
        CheckConstraint(any_of("flow_mark", FLOW_MARKS), name="flow_mark"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    # Indexed by ix_transactions_account_posted, which leads with it (the foreign key's
    # cascade and every query by account use it).
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    posted_on: Mapped[date]
    amount_minor: Mapped[int] = mapped_column(BigInteger)
    currency: Mapped[str] = mapped_column(String(3))
    merchant: Mapped[str] = mapped_column(String(120))
    description: Mapped[str] = mapped_column(String(255), default="")
    category_id: Mapped[int | None] = mapped_column(
        ForeignKey("categories.id", ondelete="SET NULL"), index=True
    )
    pending: Mapped[bool] = mapped_column(default=False)
    # The import that added this row (undo deletes exactly these) and the bank's id (FITID).
    import_id: Mapped[int | None] = mapped_column(
        ForeignKey("imports.id", ondelete="SET NULL"), index=True
    )
    bank_id: Mapped[str | None] = mapped_column(String(255))
    # The user's correction (FLOW_MARKS), or None: the money rule decides alone.
    flow_mark: Mapped[str | None] = mapped_column(String(16))

    account: Mapped[Account] = relationship()
    category: Mapped[Category | None] = relationship()


class Budget(Base):
    """A spending limit for a category: for one `month`, or every month when it is NULL."""

    __tablename__ = "budgets"
    __table_args__ = (
        UniqueConstraint("user_id", "category_id", "month"),
        # NULLs never collide in a unique constraint, so recurring budgets need their own index.
        Index(
            "uq_budgets_recurring",
            "user_id",
            "category_id",
            unique=True,
            sqlite_where=text("month IS NULL"),
            postgresql_where=text("month IS NULL"),
        ),
        CheckConstraint("limit_minor >= 0", name="limit_minor"),
        CheckConstraint("length(currency) = 3", name="currency"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    category_id: Mapped[int] = mapped_column(
        ForeignKey("categories.id", ondelete="CASCADE"), index=True
    )
    month: Mapped[date | None]
    limit_minor: Mapped[int] = mapped_column(BigInteger)
    currency: Mapped[str] = mapped_column(String(3))

    category: Mapped[Category] = relationship()


class RecurringChoice(Base):
    """The user's word on a detected recurring series: confirmed or dismissed, and its name.

    `series_id` is the id the recurring tools give a series (from its direction, currency and
    normalised merchant), so the choice holds while the series goes on.
    """

    __tablename__ = "recurring_choices"
    # The unique (user_id, series_id) constraint doubles as the index on user_id.
    __table_args__ = (
        UniqueConstraint("user_id", "series_id"),
        CheckConstraint(_one_of("status", SERIES_STATUSES), name="status"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    series_id: Mapped[str] = mapped_column(String(32))
    status: Mapped[str | None] = mapped_column(String(16))
    name: Mapped[str | None] = mapped_column(String(120))

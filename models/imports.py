"""Statement imports: a draft of parsed rows reviewed, then committed as transactions or undone."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    CheckConstraint,
    ForeignKey,
    Index,
    Numeric,
    String,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from models.base import Base, any_of, utcnow

# `drafting`, `committing` and `undoing` last while an import is written in short
# transactions (services/imports/batches.py); the others are where it rests.
IMPORT_STATUSES = ("drafting", "draft", "committing", "committed", "undoing", "undone")
BUSY_STATUSES = ("drafting", "committing", "undoing")
ROW_STATUSES = ("new", "duplicate", "possible_duplicate", "invalid")


def _one_of(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


class StatementImport(Base):
    """One uploaded file: its detected format and statements (per account, with balances)."""

    __tablename__ = "imports"
    __table_args__ = (
        Index("ix_imports_user_created", "user_id", "id"),
        # The same file again (by content) goes where it went before.
        Index("ix_imports_user_sha256", "user_id", "sha256"),
        CheckConstraint(_one_of("status", IMPORT_STATUSES), name="status"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    status: Mapped[str] = mapped_column(String(16), default="draft")
    format: Mapped[str] = mapped_column(String(16))
    filename: Mapped[str] = mapped_column(String(255), default="")
    # Per account of the file: account_id, currency, opening/closing balances, reconciliation
    # and, once committed, the balance change the commit made (undo reverts exactly that).
    statements: Mapped[list[dict[str, Any]]] = mapped_column(default=list)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    committed_at: Mapped[datetime | None]
    # The SHA-256 of the file's bytes, hex.
    sha256: Mapped[str | None] = mapped_column(String(64))
    # Progress of the step under way (drafting, committing, undoing): rows done of the total.
    rows_done: Mapped[int] = mapped_column(default=0, server_default="0")
    rows_total: Mapped[int] = mapped_column(default=0, server_default="0")
    # The last import row a commit has added (it resumes after it).
    resume_after: Mapped[int | None]
    # When the step under way last wrote a batch: long still, its worker is gone.
    moved_at: Mapped[datetime | None]


class ImportRow(Base):
    """A parsed row of an import, its duplicate status and the user's review of it."""

    __tablename__ = "import_rows"
    __table_args__ = (
        Index("ix_import_rows_import_status", "import_id", "status", "id"),
        # A commit reads a statement's rows a batch at a time, in id order.
        Index("ix_import_rows_import_statement", "import_id", "statement", "id"),
        # Equalities, not IN: a draft inserts its rows in bulk (models.base.any_of).
        CheckConstraint(any_of("status", ROW_STATUSES), name="status"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    import_id: Mapped[int] = mapped_column(ForeignKey("imports.id", ondelete="CASCADE"))
    # The account the draft found for the row's statement; None: a new account, created at
    # commit and recorded in the import's statements only (the commit writes no row here).
    account_id: Mapped[int | None] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), index=True
    )
    # Which of the import's statements (its index in StatementImport.statements) holds it.
    statement: Mapped[int] = mapped_column(default=0)
    # Where the row is in the file (line, or entry number), for messages and order.
    position: Mapped[int]
    posted_on: Mapped[date | None]
    amount_minor: Mapped[int | None] = mapped_column(BigInteger)
    currency: Mapped[str] = mapped_column(String(3))
    merchant: Mapped[str] = mapped_column(String(120), default="")
    description: Mapped[str] = mapped_column(String(255), default="")
    bank_id: Mapped[str | None] = mapped_column(String(255))
    status: Mapped[str] = mapped_column(String(24))
    reason: Mapped[str | None] = mapped_column(String(255))
    include: Mapped[bool] = mapped_column(default=True)
    category: Mapped[str | None] = mapped_column(String(80))
    # The existing transaction this row duplicates or may duplicate.
    # Indexed: deleting a transaction walks this foreign key (SET NULL).
    matched_transaction_id: Mapped[int | None] = mapped_column(
        ForeignKey("transactions.id", ondelete="SET NULL"), index=True
    )


class ImportMapping(Base):
    """The CSV column mapping a user gave for an account, reused for that bank's next file."""

    __tablename__ = "import_mappings"
    __table_args__ = (UniqueConstraint("user_id", "account_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    account_id: Mapped[int] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), index=True
    )
    columns: Mapped[list[str]] = mapped_column(JSON, default=list)
    mapping: Mapped[dict[str, Any]] = mapped_column(default=dict)


class CategoryRule(Base):
    """A rule the user keeps: a row whose payee contains the text and whose signed amount lies
    in the range gets the category, on every draft (first rule by id wins)."""

    __tablename__ = "category_rules"
    __table_args__ = (
        CheckConstraint(
            "payee_contains IS NOT NULL OR min_amount IS NOT NULL OR max_amount IS NOT NULL",
            name="condition",
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    category_id: Mapped[int] = mapped_column(
        ForeignKey("categories.id", ondelete="CASCADE"), index=True
    )
    payee_contains: Mapped[str | None] = mapped_column(String(120))
    min_amount: Mapped[Decimal | None] = mapped_column(Numeric(20, 4))
    max_amount: Mapped[Decimal | None] = mapped_column(Numeric(20, 4))


class ImportSlot(Base):
    """One of a user's upload places held by a running upload (services/imports/slots.py):
    the primary key refuses a place already held, in every worker process sharing the
    database; one past `expires_at` lost its worker and is taken over."""

    __tablename__ = "import_slots"

    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    # 0 .. IMPORT_CONCURRENCY - 1.
    slot: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    # Which upload holds it: the worker's host and pid, and a random part (its release
    # deletes only its own).
    holder: Mapped[str] = mapped_column(String(80))
    expires_at: Mapped[datetime]

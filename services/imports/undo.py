"""An import undone: a draft discarded, or a committed import's transactions deleted, a short
transaction per batch, and its accounts' balances put back to what the rest says.

Each batch deletes up to BATCH of the import's transactions and takes their amounts as they
are now (the user may have edited them) out of their accounts' balances, in one transaction,
so a balance always agrees with the transactions left. The last step takes back what the
commit set beyond its rows (a closing balance the rows did not add up to). An undo whose
worker died (`stalled`) resumes: the next DELETE goes on where it stopped.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, cast

from sqlalchemy import Table, delete, func, select, update
from sqlalchemy.orm import Session

from models import Account, ImportRow, StatementImport, Transaction, utcnow
from models.db import Database
from services.imports.commits import owned
from services.imports.drafts import discard_rows
from services.imports.steps import BATCH, Progress, busy, moved, stalled

TRANSACTIONS = cast(Table, Transaction.__table__)


def undo(
    db: Database, user_id: int, import_id: int, progress: Progress | None = None
) -> tuple[str, int]:
    """Discard a draft, or undo a committed import: (what was done, transactions removed)."""
    with db.transaction() as s:
        found = owned(s, user_id, import_id, lock=True)
        if found.status == "undone":
            return "undone", 0
        if found.status in ("drafting", "committing", "undoing") and not stalled(
            found, db.timings.import_stall
        ):
            raise busy(found, db.timings.import_stall)
        if found.status in ("draft", "drafting") or (
            found.status == "undoing" and found.committed_at is None
        ):
            found.status = "undoing"
            found.rows_done = 0
            found.rows_total = _count(s, ImportRow.import_id == found.id)
            found.moved_at = utcnow()
            discarding = True
        else:
            _begin(s, user_id, found)
            discarding = False
    if discarding:
        discard_rows(db, import_id)
        return "discarded", 0
    while _delete_batch(db, user_id, import_id):
        if progress:
            with db.read() as s:
                item = owned(s, user_id, import_id)
                progress(item.rows_done, item.rows_total)
    with db.transaction() as s:
        found = owned(s, user_id, import_id, lock=True)
        for account_id, adjustment in _adjustments(found.statements).items():
            if adjustment:
                _move(s, user_id, account_id, -adjustment)
        found.status = "undone"
        return "undone", found.rows_done


def _begin(s: Session, user_id: int, found: StatementImport) -> None:
    """The first short transaction of an undo: the import `undoing`, its transactions counted.
    An import committed before adjustments were kept gets them now: what its balance change
    was beyond its rows as they are."""
    left = _count(s, Transaction.import_id == found.id)
    if found.status != "undoing":
        statements = [dict(info) for info in found.statements]
        if found.status == "committed" and any(
            "adjustment_minor" not in info for info in statements
        ):
            _legacy_adjustments(s, found.id, statements)
        found.statements = statements
        found.status, found.rows_done = "undoing", 0
        if found.committed_at is None:
            found.committed_at = utcnow()
    found.rows_total = found.rows_done + left
    found.moved_at = utcnow()


def _delete_batch(db: Database, user_id: int, import_id: int) -> bool:
    """Delete up to BATCH of the import's transactions, their posted amounts out of their
    accounts' balances; False when none was left."""
    with db.transaction() as s:
        found = owned(s, user_id, import_id, lock=True)
        if found.status != "undoing":
            raise busy(found, db.timings.import_stall)
        following = (
            select(Transaction.id)
            .where(Transaction.import_id == import_id)
            .order_by(Transaction.id)
            .limit(BATCH)
            .subquery()
        )
        last, count = s.execute(
            select(func.max(following.c.id), func.count()).select_from(following)
        ).one()
        if last is None:
            return False
        batch = (Transaction.import_id == import_id, Transaction.id <= last)
        sums = s.execute(
            select(Transaction.account_id, func.sum(Transaction.amount_minor))
            .where(*batch, Transaction.pending.is_(False))
            .group_by(Transaction.account_id)
        ).all()
        s.execute(
            delete(TRANSACTIONS).where(
                TRANSACTIONS.c.import_id == import_id, TRANSACTIONS.c.id <= last
            )
        )
        for account_id, total in sums:
            _move(s, user_id, account_id, -int(total or 0))
        moved(s, import_id, found.rows_done + int(count))
        return True


def _move(s: Session, user_id: int, account_id: int, change: int) -> None:
    s.execute(
        update(Account)
        .where(Account.id == account_id, Account.user_id == user_id)
        .values(balance_minor=Account.balance_minor + change)
    )


def _count(s: Session, where: Any) -> int:
    return int(s.scalar(select(func.count()).where(where)) or 0)


def _adjustments(statements: list[dict[str, Any]]) -> dict[int, int]:
    """Per account, what its statements' commits set beyond their rows."""
    found: dict[int, int] = defaultdict(int)
    for info in statements:
        if info.get("account_id") is not None:
            found[int(info["account_id"])] += int(info.get("adjustment_minor") or 0)
    return found


def _legacy_adjustments(s: Session, import_id: int, statements: list[dict[str, Any]]) -> None:
    """For an import committed with only its balance change kept: per account, that change
    less its rows as they are now (what undid it before), on the account's first statement."""
    rows = dict(
        s.execute(
            select(Transaction.account_id, func.sum(Transaction.amount_minor))
            .where(Transaction.import_id == import_id, Transaction.pending.is_(False))
            .group_by(Transaction.account_id)
        ).all()
    )
    seen: set[int] = set()
    for info in statements:
        account_id = info.get("account_id")
        if account_id is None:
            continue
        change = sum(
            int(other.get("balance_change_minor") or 0)
            for other in statements
            if other.get("account_id") == account_id
        )
        first = account_id not in seen
        seen.add(account_id)
        info["adjustment_minor"] = change - int(rows.get(account_id) or 0) if first else 0

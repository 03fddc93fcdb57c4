"""What a user reviews of an import: its summary, reconciliation and rows, and row edits."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session, aliased

from domain.errors import Conflict, NotFound, Unprocessable
from domain.money import format_minor
from models import Account, ImportRow, StatementImport, Transaction
from models.base import iso
from models.db import Database
from models.imports import ROW_STATUSES
from services.imports.commits import owned
from services.imports.steps import SPLIT, stalled

# Sums are taken in parts of this size (see summary).


def show(db: Database, user_id: int, import_id: int) -> dict[str, Any]:
    """The user's import: format, accounts with their reconciliation, counts per status."""
    with db.read() as s:
        return summary(s, owned(s, user_id, import_id), db.timings.import_stall)


def listing(db: Database, user_id: int, limit: int, cursor: int | None) -> dict[str, Any]:
    """The user's imports, newest first, a page at a time."""
    with db.read() as s:
        query = select(StatementImport).where(StatementImport.user_id == user_id)
        if cursor is not None:
            query = query.where(StatementImport.id < cursor)
        found = list(s.scalars(query.order_by(StatementImport.id.desc()).limit(limit + 1)))
        page = found[:limit]
        return {
            "imports": [summary(s, item, db.timings.import_stall) for item in page],
            "next_cursor": str(page[-1].id) if len(found) > limit else None,
        }


def summary(s: Session, item: StatementImport, stall: float) -> dict[str, Any]:
    """An import as the API shows it (`stall`: seconds without a batch that make a step
    under way `stalled`)."""
    # Each sum is taken in two parts (billions and the rest) and added here, exactly: no sum
    # of a file's amounts can pass the database's 64 bits.
    high = ImportRow.amount_minor // SPLIT
    totals = [
        (statement, status, include, count, int(billions or 0) * SPLIT + int(rest or 0))
        for statement, status, include, count, billions, rest in s.execute(
            select(
                ImportRow.statement,
                ImportRow.status,
                ImportRow.include,
                func.count(),
                func.sum(high),
                func.sum(ImportRow.amount_minor - high * SPLIT),
            )
            .where(ImportRow.import_id == item.id)
            .group_by(ImportRow.statement, ImportRow.status, ImportRow.include)
        )
    ]
    counts = dict.fromkeys(ROW_STATUSES, 0)
    included = 0
    for _index, status, include, count, _total in totals:
        counts[status] += count
        included += count if include and status != "invalid" else 0
    names = _account_names(s, item)
    accounts = []
    closings: dict[Any, int | None] = {}  # the last closing balance of each account so far
    for index, info in enumerate(item.statements):
        key = info.get("account_id") or info.get("bank_ref")
        accounts.append(_statement(index, info, names, totals, closings.get(key) if key else None))
        if key:
            closings[key] = info.get("closing_minor")
    not_imported = [note for info in item.statements for note in info.get("not_imported", ())]
    return {
        "id": item.id,
        "status": item.status,
        "format": item.format,
        "filename": item.filename,
        "created_at": iso(item.created_at),
        "committed_at": iso(item.committed_at),
        "counts": {**counts, "included": included, "total": sum(counts.values())},
        "accounts": accounts,
        "not_imported": not_imported,
        "progress": {
            "done": item.rows_done,
            "total": item.rows_total,
            "stalled": stalled(item, stall),
        },
        "same_file_as": next(
            (info["same_file_as"] for info in item.statements if info.get("same_file_as")), None
        ),
    }


def _account_names(s: Session, item: StatementImport) -> dict[int, str]:
    ids = [info["account_id"] for info in item.statements if info.get("account_id")]
    if not ids:
        return {}
    found = s.execute(select(Account.id, Account.name).where(Account.id.in_(ids)))
    return {ident: name for ident, name in found}


def _statement(
    index: int,
    info: dict[str, Any],
    names: dict[int, str],
    totals: Sequence[Any],
    previous: int | None,
) -> dict[str, Any]:
    currency = info["currency"]
    valid = included = 0
    for statement, status, include, _count, total in totals:
        if statement == index and status != "invalid":
            valid += total
            included += total if include else 0
    return {
        "account_id": info.get("account_id"),
        "account_name": names.get(info.get("account_id") or 0),
        "new_account": info.get("account_id") is None,
        "bank_ref": info.get("bank_ref"),
        "bank_name": info.get("bank_name"),
        "last_digits": info.get("last_digits"),
        "kind": info.get("kind"),
        "currency": currency,
        "reconciliation": _reconciliation(info, valid, included, previous),
    }


def _reconciliation(
    info: dict[str, Any], valid: int, included: int, previous: int | None
) -> dict[str, Any] | None:
    """Opening balance plus rows against the closing balance the file states, per statement.

    The opening is the one the file states (CAMT, MT940, a CSV's running balance), else the
    closing balance of the account's statement before it in the same file, and every readable
    row counts: the file agrees with itself (`basis: file`). Without either, an account that
    exists opens at its balance before the import and the rows are those included: the account
    will agree with the statement once committed (`basis: account`); a new account opens at
    the statement's own opening, its closing balance less its rows (`basis: derived`, OFX).
    `chained` says whether the opening the file states is the previous statement's closing.
    """
    closing = info.get("closing_minor")
    if closing is None:
        return None
    currency = info["currency"]
    stated = info.get("opening_minor")
    before = info.get("balance_before_minor")
    if stated is not None:
        opening, rows, basis = stated, valid, "file"
    elif previous is not None:
        opening, rows, basis = previous, valid, "file"
    elif before is not None:
        opening, rows, basis = before, included, "account"
    else:
        opening, rows, basis = closing - valid, valid, "derived"
    difference = closing - (opening + rows)
    return {
        "basis": basis,
        "opening": format_minor(opening, currency),
        "rows_total": format_minor(rows, currency),
        "closing": format_minor(closing, currency),
        "difference": format_minor(difference, currency),
        "balanced": difference == 0,
        "chained": None if previous is None or stated is None else stated == previous,
    }


def rows(
    db: Database,
    user_id: int,
    import_id: int,
    *,
    status: str | None,
    limit: int,
    cursor: int | None,
) -> dict[str, Any]:
    """A page of the import's rows in file order, optionally of one status."""
    matched = aliased(Transaction)
    with db.read() as s:
        item = owned(s, user_id, import_id)
        query = (
            select(ImportRow, matched)
            .outerjoin(matched, matched.id == ImportRow.matched_transaction_id)
            .where(ImportRow.import_id == import_id)
        )
        if status:
            query = query.where(ImportRow.status == status)
        if cursor is not None:
            query = query.where(ImportRow.id > cursor)
        found = s.execute(query.order_by(ImportRow.id).limit(limit + 1)).all()
        page = found[:limit]
        return {
            "rows": [row_view(row, match, item) for row, match in page],
            "next_cursor": str(page[-1][0].id) if len(found) > limit else None,
        }


def row_view(row: ImportRow, match: Transaction | None, item: StatementImport) -> dict[str, Any]:
    """A row of `item` as the API shows it, with the existing transaction it matches. Its
    account is its statement's: a row keeps the one its draft found (None: a new account,
    which the commit creates and records in the import's statements, not in each row)."""
    account_id = row.account_id
    if account_id is None and row.statement < len(item.statements):
        account_id = item.statements[row.statement].get("account_id")
    return {
        "id": row.id,
        "position": row.position,
        "account_id": account_id,
        "date": row.posted_on.isoformat() if row.posted_on else None,
        "amount": format_minor(row.amount_minor, row.currency)
        if row.amount_minor is not None
        else None,
        "currency": row.currency,
        "merchant": row.merchant,
        "description": row.description,
        "bank_id": row.bank_id,
        "status": row.status,
        "reason": row.reason,
        "include": row.include,
        "category": row.category,
        "matches": None
        if match is None
        else {
            "id": match.id,
            "date": match.posted_on.isoformat(),
            "amount": format_minor(match.amount_minor, match.currency),
            "merchant": match.merchant,
            "description": match.description,
        },
    }


def edit_row(
    db: Database, user_id: int, import_id: int, row_id: int, changes: dict[str, Any]
) -> dict[str, Any]:
    """Include or exclude a draft's row, or set its category."""
    with db.transaction() as s:
        draft = owned(s, user_id, import_id, lock=True)
        row = s.get(ImportRow, row_id)
        if row is None or row.import_id != draft.id:
            raise NotFound("row", str(row_id))
        if draft.status != "draft":
            raise Conflict(
                f"This import is {draft.status}; only a draft's rows change.", code="not_a_draft"
            )
        if changes.get("include") and row.status == "invalid":
            raise Unprocessable(
                f"An invalid row cannot be included: {row.reason}.", field="include"
            )
        if "include" in changes:
            row.include = bool(changes["include"])
        if "category" in changes:
            row.category = changes["category"]
        s.flush()
        match = (
            s.get(Transaction, row.matched_transaction_id) if row.matched_transaction_id else None
        )
        return row_view(row, match, draft)

"""A draft committed as transactions in one database transaction, or undone exactly.

Committing twice adds nothing (the second finds the import committed); undoing deletes the
transactions the import added, and nothing else, and reverts the balance change it made.
"""

from __future__ import annotations

from typing import Any, cast

from sqlalchemy import CursorResult, Table, delete, func, insert, select, update
from sqlalchemy.orm import Session

from domain.errors import Conflict, NotFound
from models import Account, Category, ImportRow, StatementImport, Transaction, utcnow
from models.db import Database
from services.imports.drafts import BATCH, existing_rows, save_mapping
from services.imports.duplicates import Matcher
from statements.parsed import ParsedRow

TRANSACTIONS = cast(Table, Transaction.__table__)
NAMES = {"checking": "Checking", "savings": "Savings", "credit_card": "Card"}


def owned(s: Session, user_id: int, import_id: int, *, lock: bool = False) -> StatementImport:
    """The user's import `import_id` (locked for update if asked), or 404."""
    query = select(StatementImport).where(
        StatementImport.id == import_id, StatementImport.user_id == user_id
    )
    found = s.scalar(query.with_for_update() if lock else query)
    if found is None:
        raise NotFound("import", str(import_id))
    return found


def commit(db: Database, user_id: int, import_id: int) -> int:
    """Add the draft's included rows as transactions; return how many were added (0 when it
    was committed already). An undone import cannot be committed again: 409."""
    with db.transaction() as s:
        draft = owned(s, user_id, import_id, lock=True)
        if draft.status == "committed":
            return 0
        if draft.status != "draft":
            raise Conflict("This import was undone; upload the file again.", code="import_undone")
        statements = [dict(st) for st in draft.statements]
        added = 0
        for index, info in enumerate(statements):
            account = _account(s, user_id, info)
            if info["account_id"] is None:
                info["account_id"] = account.id
                s.execute(
                    update(ImportRow)
                    .where(ImportRow.import_id == draft.id, ImportRow.statement == index)
                    .values(account_id=account.id)
                )
            if info.get("bank_ref") and account.bank_ref is None:
                account.bank_ref = info["bank_ref"]  # its next statement finds it by number
            count, total = _add_rows(s, user_id, draft.id, index, account)
            added += count
            before = account.balance_minor
            closing, opening = info.get("closing_minor"), info.get("opening_minor")
            if closing is not None:
                account.balance_minor = closing
            elif opening is not None and info.get("balance_before_minor") is None:
                account.balance_minor = opening + total  # a new account opens at the file's
            else:
                account.balance_minor = before + total
            info["balance_change_minor"] = account.balance_minor - before
            if info.get("mapping"):
                save_mapping(s, user_id, account.id, info["columns"], info["mapping"])
        draft.statements = statements
        draft.status, draft.committed_at = "committed", utcnow()
        return added


def undo(db: Database, user_id: int, import_id: int) -> tuple[str, int]:
    """Discard a draft, or undo a committed import: (what was done, transactions removed)."""
    with db.transaction() as s:
        found = owned(s, user_id, import_id, lock=True)
        if found.status == "draft":
            s.delete(found)
            return "discarded", 0
        if found.status == "undone":
            return "undone", 0
        deleted = delete(Transaction).where(
            Transaction.import_id == found.id, Transaction.user_id == user_id
        )
        removed = cast(CursorResult[Any], s.execute(deleted)).rowcount
        for info in found.statements:
            change = info.get("balance_change_minor") or 0
            if info.get("account_id") is not None and change:
                s.execute(
                    update(Account)
                    .where(Account.id == info["account_id"], Account.user_id == user_id)
                    .values(balance_minor=Account.balance_minor - change)
                )
        found.status = "undone"
        return "undone", int(removed or 0)


def _account(s: Session, user_id: int, info: dict[str, Any]) -> Account:
    if info["account_id"] is not None:
        account = s.get(Account, info["account_id"])
        if account is None or account.user_id != user_id:
            raise Conflict("The import's account was deleted.", code="account_gone")
        return account
    if info.get("bank_ref"):
        # Another import may have created it since this draft was made.
        known = s.scalar(
            select(Account).where(Account.user_id == user_id, Account.bank_ref == info["bank_ref"])
        )
        if known is not None:
            return known
    account = Account(
        user_id=user_id,
        name=_free_name(s, user_id, info),
        kind=info.get("kind") or "checking",
        currency=info["currency"],
        balance_minor=0,
        bank_ref=info.get("bank_ref"),
    )
    s.add(account)
    s.flush()
    return account


def _free_name(s: Session, user_id: int, info: dict[str, Any]) -> str:
    base = info.get("new_account_name") or (
        f"{NAMES.get(info.get('kind') or '', 'Account')} ...{str(info['bank_ref'])[-4:]}"
        if info.get("bank_ref")
        else "Imported account"
    )
    taken = set(s.scalars(select(Account.name).where(Account.user_id == user_id)))
    name, n = base[:80], 2
    while name in taken:
        name, n = f"{base[:72]} ({n})", n + 1
    return name


def _add_rows(
    s: Session, user_id: int, import_id: int, index: int, account: Account
) -> tuple[int, int]:
    """Insert the statement's included rows, a batch at a time (no list of them all is held);
    return (count, total in minor units)."""
    included = (
        ImportRow.import_id == import_id,
        ImportRow.statement == index,
        ImportRow.include.is_(True),
        ImportRow.status != "invalid",
    )
    categories = _categories(s, user_id, included)
    matcher = _matcher(s, import_id, account.id, included)
    query = (
        select(
            ImportRow.id,
            ImportRow.position,
            ImportRow.status,
            ImportRow.posted_on,
            ImportRow.amount_minor,
            ImportRow.merchant,
            ImportRow.description,
            ImportRow.bank_id,
            ImportRow.category,
        )
        .where(*included)
        .order_by(ImportRow.id)
        .execution_options(yield_per=BATCH)
    )
    count = total = 0
    stale: list[int] = []
    for chunk in s.execute(query).partitions():
        batch: list[dict[str, Any]] = []
        for row in chunk:
            if matcher is not None and row.status == "new" and _added_since(matcher, row):
                stale.append(row.id)
                continue
            batch.append(
                {
                    "user_id": user_id,
                    "account_id": account.id,
                    "posted_on": row.posted_on,
                    "amount_minor": row.amount_minor,
                    "currency": account.currency,
                    "merchant": row.merchant,
                    "description": row.description,
                    "category_id": categories.get(row.category) if row.category else None,
                    "pending": False,
                    "import_id": import_id,
                    "bank_id": row.bank_id,
                }
            )
            count, total = count + 1, total + row.amount_minor
        if batch:
            s.execute(insert(TRANSACTIONS), batch)
    for start in range(0, len(stale), BATCH):
        s.execute(
            update(ImportRow)
            .where(ImportRow.id.in_(stale[start : start + BATCH]))
            .values(status="duplicate", include=False, reason="added since the draft was made")
        )
    return count, total


def _matcher(s: Session, import_id: int, account_id: int, included: Any) -> Matcher | None:
    """What finds the rows, new at draft time, that the account holds by now (another import
    committed them since), so a stale draft adds no duplicates; None when none can be."""
    first, last = s.execute(
        select(func.min(ImportRow.posted_on), func.max(ImportRow.posted_on)).where(
            *included, ImportRow.status == "new"
        )
    ).one()
    if first is None or last is None:
        return None
    claimed = set(
        s.scalars(
            select(ImportRow.matched_transaction_id).where(
                ImportRow.import_id == import_id, ImportRow.matched_transaction_id.is_not(None)
            )
        )
    )
    existing = [e for e in existing_rows(s, account_id, first, last) if e.id not in claimed]
    return Matcher(existing) if existing else None


def _added_since(matcher: Matcher, row: Any) -> bool:
    parsed = ParsedRow(
        row.position, row.posted_on, row.amount_minor, row.merchant, row.description, row.bank_id
    )
    return matcher.classify(parsed).status == "duplicate"


def _categories(s: Session, user_id: int, included: Any) -> dict[str, int]:
    """The ids of the categories the rows name, creating those the user does not have yet
    (income when every row of it is money in, else expense)."""
    named: list[tuple[str, int]] = [
        (str(name), int(smallest or 0))
        for name, smallest in s.execute(
            select(ImportRow.category, func.min(ImportRow.amount_minor))
            .where(*included, ImportRow.category.is_not(None))
            .group_by(ImportRow.category)
        )
    ]
    if not named:
        return {}
    query = select(Category.name, Category.id).where(
        Category.user_id == user_id,
        func.lower(Category.name).in_([name.lower() for name, _ in named]),
    )
    lowered = {name.lower(): ident for name, ident in s.execute(query)}
    result: dict[str, int] = {}
    for name, smallest in named:
        if name.lower() not in lowered:
            kind = "income" if smallest > 0 else "expense"
            category = Category(user_id=user_id, name=name, kind=kind)
            s.add(category)
            s.flush()
            lowered[name.lower()] = category.id
        result[name] = lowered[name.lower()]
    return result

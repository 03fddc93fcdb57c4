"""A draft committed as transactions, a short transaction per batch of rows.

Committing twice adds nothing (the second finds the import committed); a commit stopped
mid-way (its worker died) resumes where it stopped. Undo is in services/imports/undo.py.
"""

from __future__ import annotations

from typing import Any, cast

from sqlalchemy import Table, case, false, func, insert, literal, null, select, update
from sqlalchemy.orm import Session

from domain.errors import Conflict, NotFound, Unprocessable
from domain.money import MAX_INTEGER_DIGITS, within_bound
from models import Account, Category, ImportRow, StatementImport, Transaction, utcnow
from models.db import Database
from services.imports.drafts import existing_rows, save_mapping
from services.imports.duplicates import Matcher
from services.imports.steps import BATCH, SPLIT, Progress, busy, moved, stalled
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


def commit(db: Database, user_id: int, import_id: int, progress: Progress | None = None) -> int:
    """Add the draft's included rows as transactions; return how many it added (0 when it
    was committed already). An undone import cannot be committed again: 409.

    The rows are added in short transactions of BATCH rows while the import is `committing`,
    each moving its account's balance by the rows it adds; a commit whose worker died
    (`stalled`) resumes after the last batch it wrote.
    """
    with db.transaction() as s:
        draft = owned(s, user_id, import_id, lock=True)
        if draft.status == "committed":
            return 0
        if draft.status in ("undoing", "undone"):
            raise Conflict("This import was undone; upload the file again.", code="import_undone")
        if draft.status == "drafting" or (
            draft.status == "committing" and not stalled(draft, db.timings.import_stall)
        ):
            raise busy(draft, db.timings.import_stall)
        if draft.status == "draft":
            _begin(s, user_id, draft)
        else:
            moved(s, draft.id, draft.rows_done)  # resumed: this request holds it now
        count = len(draft.statements)
    for index in range(count):
        _commit_statement(db, user_id, import_id, index, progress)
    with db.transaction() as s:
        draft = owned(s, user_id, import_id, lock=True)
        if draft.status != "committing":  # an undo took it over meanwhile
            raise busy(draft, db.timings.import_stall)
        draft.status = "committed"
        return sum(int(info.get("added", 0)) for info in draft.statements)


def _begin(s: Session, user_id: int, draft: StatementImport) -> None:
    """The first short transaction of a commit: each statement's account (created if new),
    the rows to add counted, the import `committing`."""
    statements = [dict(st) for st in draft.statements]
    for index, info in enumerate(statements):
        account = _account(s, user_id, info, draft, index)
        info["account_id"] = account.id  # its rows get it a batch at a time
        if info.get("bank_ref") and account.bank_ref is None:
            account.bank_ref = info["bank_ref"]  # its next statement finds it by number
        info.update(added=0, rows_total_minor=0, done=False)
        _check_bounds(s, draft.id, index, info, account)
    total = s.scalar(select(func.count()).where(ImportRow.import_id == draft.id))
    draft.statements = statements
    draft.status, draft.committed_at = "committing", utcnow()
    draft.rows_done, draft.rows_total, draft.resume_after = 0, int(total or 0), 0
    draft.moved_at = utcnow()


def _check_bounds(
    s: Session, import_id: int, index: int, info: dict[str, Any], account: Account
) -> None:
    """422 `balance_out_of_range`, nothing changed, when the account's balance would pass
    MAX_INTEGER_DIGITS on the way: its balance now plus every row in, or plus every row out
    (a batch adds either first), or the closing or opening balance the file states."""
    high = ImportRow.amount_minor // SPLIT
    parts = []
    for side in (ImportRow.amount_minor > 0, ImportRow.amount_minor < 0):
        billions, rest = s.execute(
            select(func.sum(high), func.sum(ImportRow.amount_minor - high * SPLIT)).where(
                *_included(import_id, index), side
            )
        ).one()
        parts.append(int(billions or 0) * SPLIT + int(rest or 0))
    before = account.balance_minor
    reached = [before + part for part in parts]
    reached += [int(v) for v in (info.get("closing_minor"), info.get("opening_minor")) if v]
    if not all(within_bound(v, account.currency) for v in reached):
        raise Unprocessable(
            f"Statement {index + 1} would take the account's balance past "
            f"{MAX_INTEGER_DIGITS} digits: nothing was committed.",
            code="balance_out_of_range",
            details={"statement": index, "max_integer_digits": MAX_INTEGER_DIGITS},
        )


def _included(import_id: int, index: int | None = None) -> tuple[Any, ...]:
    found = (
        ImportRow.import_id == import_id,
        ImportRow.include.is_(True),
        ImportRow.status != "invalid",
    )
    return found if index is None else (*found, ImportRow.statement == index)


def _commit_statement(
    db: Database, user_id: int, import_id: int, index: int, progress: Progress | None
) -> None:
    """Add one statement's rows, BATCH per transaction, then set its account's balance."""
    with db.transaction() as s:
        draft = owned(s, user_id, import_id, lock=True)
        info = dict(draft.statements[index])
        if info.get("done"):
            return
        account = s.get(Account, info["account_id"])
        if account is None:
            raise Conflict("The import's account was deleted.", code="account_gone")
        if info.get("before_minor") is None:
            info["before_minor"] = account.balance_minor
            _store_info(draft, index, info)
        categories = _categories(s, user_id, _included(import_id, index))
        currency = account.currency
    with db.read() as s:
        matcher = _matcher(s, import_id, info["account_id"], _included(import_id, index))
    while True:
        with db.transaction() as s:
            draft = owned(s, user_id, import_id, lock=True)
            if draft.status != "committing":
                raise busy(draft, db.timings.import_stall)
            info = dict(draft.statements[index])
            last = _add_batch(s, user_id, draft, index, (info, currency), categories, matcher)
            if last is None:
                _settle(s, draft, index, info)
                return
        if progress:
            progress(draft.rows_done, draft.rows_total)


def _add_batch(
    s: Session,
    user_id: int,
    draft: StatementImport,
    index: int,
    target: tuple[dict[str, Any], str],
    categories: dict[str, int],
    matcher: Matcher | None,
) -> int | None:
    """Add the included rows among the statement's next BATCH rows after
    `draft.resume_after`, and their sum to the account's balance; return the last row's id
    (None: none was left). The rows go from one table to the other in the database (INSERT
    ... SELECT): no row passes through Python unless the account holds transactions the
    draft did not know of (`matcher`), to be checked against."""
    info, currency = target
    after = draft.resume_after or 0
    ranged = (ImportRow.import_id == draft.id, ImportRow.statement == index)
    following = (
        select(ImportRow.id)
        .where(*ranged, ImportRow.id > after)
        .order_by(ImportRow.id)
        .limit(BATCH)
        .subquery()
    )
    last, seen = s.execute(
        select(func.max(following.c.id), func.count()).select_from(following)
    ).one()
    if last is None:
        return None
    batch = (*_included(draft.id, index), ImportRow.id > after, ImportRow.id <= last)
    account_id = info["account_id"]
    if matcher is not None:
        _mark_added_since(s, matcher, batch)
    category = case(categories, value=ImportRow.category, else_=None) if categories else null()
    rows = select(
        literal(user_id),
        literal(account_id),
        ImportRow.posted_on,
        ImportRow.amount_minor,
        literal(currency),
        ImportRow.merchant,
        ImportRow.description,
        category,
        false(),
        literal(draft.id),
        ImportRow.bank_id,
    ).where(*batch)
    columns = ["user_id", "account_id", "posted_on", "amount_minor", "currency", "merchant"]
    columns += ["description", "category_id", "pending", "import_id", "bank_id"]
    s.execute(insert(TRANSACTIONS).from_select(columns, rows))
    added, total = s.execute(
        select(func.count(), func.sum(ImportRow.amount_minor)).where(*batch)
    ).one()
    total = int(total or 0)
    if total:
        s.execute(
            update(Account)
            .where(Account.id == account_id)
            .values(balance_minor=Account.balance_minor + total)
        )
    info["added"] = int(info.get("added", 0)) + int(added)
    info["rows_total_minor"] = int(info.get("rows_total_minor", 0)) + total
    _store_info(draft, index, info)
    draft.resume_after = int(last)
    draft.rows_done += int(seen)
    draft.moved_at = utcnow()
    return int(last)


def _mark_added_since(s: Session, matcher: Matcher, batch: tuple[Any, ...]) -> None:
    """Rows of the batch found new at draft time that the account holds by now become
    duplicates ("added since the draft was made"), before the batch is added."""
    found = s.execute(
        select(
            ImportRow.id,
            ImportRow.position,
            ImportRow.posted_on,
            ImportRow.amount_minor,
            ImportRow.merchant,
            ImportRow.description,
            ImportRow.bank_id,
        ).where(*batch, ImportRow.status == "new")
    )
    stale = [row.id for row in found if _added_since(matcher, row)]
    if stale:
        s.execute(
            update(ImportRow)
            .where(ImportRow.id.in_(stale))
            .values(status="duplicate", include=False, reason="added since the draft was made")
        )


def _settle(s: Session, draft: StatementImport, index: int, info: dict[str, Any]) -> None:
    """The statement's rows are all added: its account's balance becomes the closing balance
    the file states (a new account with only an opening balance: that plus the rows; else
    the rows were the whole change). What the closing balance adds beyond the rows is kept
    as `adjustment_minor`, which undo takes back beside the rows it deletes."""
    before, rows = int(info["before_minor"]), int(info.get("rows_total_minor", 0))
    closing, opening = info.get("closing_minor"), info.get("opening_minor")
    if closing is not None:
        target = int(closing)
    elif opening is not None and info.get("balance_before_minor") is None:
        target = int(opening) + rows  # a new account opens at the file's
    else:
        target = before + rows
    adjustment = target - (before + rows)
    if adjustment:
        s.execute(
            update(Account)
            .where(Account.id == info["account_id"])
            .values(balance_minor=Account.balance_minor + adjustment)
        )
    info.update(adjustment_minor=adjustment, balance_change_minor=target - before, done=True)
    _store_info(draft, index, info)
    if info.get("mapping"):
        save_mapping(s, draft.user_id, info["account_id"], info["columns"], info["mapping"])


def _store_info(draft: StatementImport, index: int, info: dict[str, Any]) -> None:
    statements = [dict(st) for st in draft.statements]
    statements[index] = info
    draft.statements = statements


def _account(
    s: Session, user_id: int, info: dict[str, Any], draft: StatementImport, index: int
) -> Account:
    """The statement's account: the draft's, else the one the same file went to since the
    draft was made, else the one holding its bank number, else a new one."""
    if info["account_id"] is None and draft.sha256:
        earlier = s.execute(
            select(StatementImport.statements)
            .where(
                StatementImport.user_id == user_id,
                StatementImport.sha256 == draft.sha256,
                StatementImport.id != draft.id,
                StatementImport.status.in_(("committing", "committed")),
            )
            .order_by(StatementImport.id.desc())
            .limit(1)
        ).scalar()
        if earlier and index < len(earlier) and earlier[index].get("account_id"):
            went = s.get(Account, earlier[index]["account_id"])
            if went is not None and went.user_id == user_id:
                return went
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
    existing = [
        e for e in existing_rows(s, account_id, first, last, but=import_id) if e.id not in claimed
    ]
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

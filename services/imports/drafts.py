"""A file parsed into a draft: its statements matched to accounts, its rows classified.

Nothing is stored unless the whole file parses, and a draft writes no transaction, account or
balance: accounts a statement needs are created when the draft is committed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any, cast

from sqlalchemy import Table, insert, select
from sqlalchemy.orm import Session

from domain.errors import NotFound, Unprocessable
from models import Account, ImportMapping, ImportRow, StatementImport, Transaction
from models.db import Database
from services.imports.duplicates import POSSIBLE_DAYS, Existing, Matcher
from services.imports.reader import read_untrusted
from services.imports.rules import Rule, category_for, rules_of
from statements.parsed import ParsedFile, ParsedStatement
from statements.read import ReadOptions, SavedMappings

# Core inserts: the ORM's bulk path costs more than the database's work.
IMPORT_ROWS = cast(Table, ImportRow.__table__)
# Rows written per INSERT statement.
BATCH = 2000
# Told (rows stored so far, rows in the file) after each batch.
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Upload:
    """A file and what its uploader said about it."""

    data: bytes
    filename: str
    account_id: int | None = None
    account_name: str | None = None
    format: str | None = None
    currency: str | None = None
    locale: str | None = None
    mapping: dict[str, str] | None = None


def create_draft(
    db: Database, user_id: int, upload: Upload, progress: Progress | None = None
) -> int:
    """Parse `upload` and store it as a draft; return its id. A file that fails stores nothing."""
    account = _given_account(db, user_id, upload.account_id)
    saved = _saved_mappings(db, user_id, account.id) if account else {}
    options = ReadOptions(
        format=upload.format,
        currency=upload.currency.upper() if upload.currency else _currency_of(account),
        locale=upload.locale,
        mapping=upload.mapping,
        saved=SavedMappings(saved),
    )
    parsed = read_untrusted(upload.data, upload.filename, options)
    with db.transaction() as s:
        accounts = _accounts(s, user_id, parsed, account, upload)
        draft = StatementImport(
            user_id=user_id,
            format=parsed.format,
            filename=upload.filename[:255],
            statements=[
                _statement_info(st, acct, parsed, upload.account_name)
                for st, acct in zip(parsed.statements, accounts, strict=True)
            ],
        )
        s.add(draft)
        s.flush()
        total, done = sum(st.span()[2] for st in parsed.statements), 0
        rules = rules_of(s, user_id)
        for index, (statement, acct) in enumerate(zip(parsed.statements, accounts, strict=True)):
            done = _store_rows(s, draft.id, index, statement, acct, rules, (done, total), progress)
        if parsed.mapping is not None and account is not None and upload.mapping is not None:
            save_mapping(s, user_id, account.id, parsed.columns or [], parsed.mapping)
        return draft.id


def save_mapping(
    s: Session, user_id: int, account_id: int, columns: list[str], mapping: dict[str, str]
) -> None:
    """Keep `mapping` as the account's CSV mapping, for its next file with these columns."""
    found = s.scalar(
        select(ImportMapping).where(
            ImportMapping.user_id == user_id, ImportMapping.account_id == account_id
        )
    )
    if found is None:
        s.add(
            ImportMapping(user_id=user_id, account_id=account_id, columns=columns, mapping=mapping)
        )
    else:
        found.columns, found.mapping = columns, mapping


def _currency_of(account: Account | None) -> str | None:
    return account.currency if account else None


def _given_account(db: Database, user_id: int, account_id: int | None) -> Account | None:
    if account_id is None:
        return None
    with db.read() as s:
        account = s.get(Account, account_id)
        if account is None or account.user_id != user_id:
            raise NotFound("account", str(account_id))
        return account


def _saved_mappings(db: Database, user_id: int, account_id: int) -> dict[tuple[str, ...], Any]:
    with db.read() as s:
        found = s.scalar(
            select(ImportMapping).where(
                ImportMapping.user_id == user_id, ImportMapping.account_id == account_id
            )
        )
        return {tuple(found.columns): dict(found.mapping)} if found else {}


def _accounts(
    s: Session, user_id: int, parsed: ParsedFile, given: Account | None, upload: Upload
) -> list[Account | None]:
    """Each statement's account: the one holding its bank number, else the one given, else a
    new one (None here: created at commit)."""
    refs = [st.bank_ref for st in parsed.statements if st.bank_ref]
    known = {
        a.bank_ref: a
        for a in s.scalars(
            select(Account).where(Account.user_id == user_id, Account.bank_ref.in_(refs))
        )
    }
    found: list[Account | None] = []
    for statement in parsed.statements:
        account = known.get(statement.bank_ref) if statement.bank_ref else None
        if account is None and given is not None and len(parsed.statements) == 1:
            account = given
        if account is None and not (statement.currency or upload.currency):
            raise Unprocessable(
                "The file does not say its currency: give `currency` or an `account_id`.",
                field="currency",
            )
        found.append(account)
    return found


def _statement_info(
    statement: ParsedStatement, account: Account | None, parsed: ParsedFile, name: str | None
) -> dict[str, Any]:
    currency = account.currency if account else statement.currency
    info: dict[str, Any] = {
        "account_id": account.id if account else None,
        "bank_ref": statement.bank_ref,
        "currency": currency or statement.currency,
        "kind": statement.kind,
        # The name a new account gets at commit (the uploader's, else one from the file).
        "new_account_name": None if account else name,
        "opening_minor": statement.opening_minor,
        "closing_minor": statement.closing_minor,
        # Reconciled against the account's balance when the file states no opening balance;
        # None for a new account, which opens at the statement's own opening balance.
        "balance_before_minor": account.balance_minor if account else None,
        # What names the account: the bank, the last digits of its number, its name in the file.
        "bank_name": statement.bank_name,
        "last_digits": statement.last_digits,
        "file_account_name": statement.name,
    }
    if parsed.mapping is not None:
        info["columns"], info["mapping"] = parsed.columns, parsed.mapping
    if parsed.not_imported and statement is parsed.statements[0]:
        info["not_imported"] = parsed.not_imported
    return info


def _store_rows(
    s: Session,
    import_id: int,
    index: int,
    statement: ParsedStatement,
    account: Account | None,
    rules: list[Rule],
    counted: tuple[int, int],
    progress: Progress | None,
) -> int:
    """Classify and store a statement's rows; return the file's rows stored so far."""
    done, total = counted
    first, last, _ = statement.span()
    existing = existing_rows(s, account.id, first, last) if account and first and last else []
    matcher = Matcher(existing)
    currency = (account.currency if account else statement.currency) or "EUR"
    batch: list[dict[str, Any]] = []
    for row in statement.each():
        verdict = matcher.classify(row)
        if verdict.status != "invalid" and (row.currency or currency) != currency:
            verdict.status, verdict.reason = (
                "invalid",
                (f"in {row.currency}, the account is in {currency}"),
            )
        batch.append(
            {
                "import_id": import_id,
                "statement": index,
                "account_id": account.id if account else None,
                "position": row.position,
                "posted_on": row.posted_on,
                "amount_minor": None if verdict.status == "invalid" else row.amount_minor,
                "currency": (row.currency or currency)[:3],
                "merchant": storable(row.merchant),
                "description": storable(row.description),
                "bank_id": storable(row.bank_id) if row.bank_id else None,
                "status": verdict.status,
                "reason": (verdict.reason or None) and verdict.reason[:255],
                "include": verdict.status == "new",
                "matched_transaction_id": verdict.matched,
                "category": category_for(
                    rules, row.merchant, row.description, row.amount_minor, currency
                )
                if rules and verdict.status != "invalid" and row.amount_minor is not None
                else None,
            }
        )
        if len(batch) >= BATCH:
            s.execute(insert(IMPORT_ROWS), batch)
            done, batch = done + len(batch), []
            if progress:
                progress(done, total)
    if batch:
        s.execute(insert(IMPORT_ROWS), batch)
        done += len(batch)
    if progress:
        progress(done, total)
    return done


def existing_rows(s: Session, account_id: int, first: date, last: date) -> list[Existing]:
    """The account's transactions a statement over [first, last] may repeat (one index range)."""
    window = timedelta(days=POSSIBLE_DAYS)
    t = Transaction
    rows = s.execute(
        select(t.id, t.posted_on, t.amount_minor, t.merchant, t.description, t.bank_id).where(
            t.account_id == account_id, t.posted_on.between(first - window, last + window)
        )
    )
    return [Existing(*row) for row in rows]


def storable(text: str) -> str:
    """`text` without NUL characters, which PostgreSQL refuses in any string."""
    return text.replace("\x00", "") if "\x00" in text else text

"""A file parsed into a draft: its statements matched to accounts, its rows classified.

Nothing is stored unless the whole file parses, and a draft writes no transaction, account or
balance: accounts a statement needs are created when the draft is committed.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any, cast

from sqlalchemy import Table, delete, func, select
from sqlalchemy.orm import Session

from domain.errors import NotFound, Unprocessable
from models import Account, ImportMapping, ImportRow, StatementImport, Transaction, utcnow
from models.db import Database
from services.imports.duplicates import POSSIBLE_DAYS, Existing, Matcher, Verdict
from services.imports.files import file_digest
from services.imports.reader import read_untrusted
from services.imports.rules import Rule, category_for, rules_of
from services.imports.steps import BATCH, Plain, Progress, bulk_insert, moved
from statements.parsed import ParsedFile, ParsedRow, ParsedStatement
from statements.read import ReadOptions, SavedMappings

# Core inserts: the ORM's bulk path costs more than the database's work.
IMPORT_ROWS = cast(Table, ImportRow.__table__)
# The columns of an import row as Store.record gives them.
COLUMNS = (
    "import_id", "statement", "account_id", "position", "posted_on", "amount_minor", "currency",
    "merchant", "description", "bank_id", "status", "reason", "include",
    "matched_transaction_id", "category",
)  # fmt: skip


@dataclass(frozen=True)
class Upload:
    """A file (its bytes, or where it is: the reader process reads it there) and what its
    uploader said about it."""

    data: bytes | Path
    filename: str
    account_id: int | None = None
    account_name: str | None = None
    format: str | None = None
    currency: str | None = None
    locale: str | None = None
    mapping: dict[str, str] | None = None
    # The file's SHA-256 when it is known already (hashed as it arrived), else hashed here.
    sha256: str | None = None


@dataclass(frozen=True)
class Earlier:
    """The last committed import of the same file: its id and each statement's account
    (None where that account was deleted since)."""

    id: int
    accounts: list[int | None]

    @property
    def only_account(self) -> int | None:
        """The account of a file of one statement."""
        return self.accounts[0] if len(self.accounts) == 1 else None


def create_draft(
    db: Database, user_id: int, upload: Upload, progress: Progress | None = None
) -> int:
    """Parse `upload` and store it as a draft; return its id. A file that fails stores nothing.

    The rows are written in short transactions of BATCH rows while the import is `drafting`;
    it becomes a `draft` once every row is stored. The same file (by content) as an earlier
    import goes to that import's accounts, whatever the upload says.
    """
    digest = upload.sha256 or file_digest(upload.data)
    earlier = earlier_import(db, user_id, digest)
    given = earlier.only_account if earlier and earlier.only_account else upload.account_id
    account = _given_account(db, user_id, given)
    saved = _saved_mappings(db, user_id, account.id) if account else {}
    options = ReadOptions(
        format=upload.format,
        currency=upload.currency.upper() if upload.currency else _currency_of(account),
        locale=upload.locale,
        mapping=upload.mapping,
        saved=SavedMappings(saved),
    )
    parsed = read_untrusted(upload.data, upload.filename, options)
    for statement in parsed.statements:  # a file that does not say it: the caller's currency
        statement.currency = statement.currency or options.currency
    total = sum(st.span()[2] for st in parsed.statements)
    with db.transaction() as s:
        accounts = _accounts(s, user_id, parsed, account, upload, earlier)
        draft = StatementImport(
            user_id=user_id,
            status="drafting",
            format=parsed.format,
            filename=upload.filename[:255],
            statements=[
                _statement_info(st, acct, parsed, upload.account_name, earlier)
                for st, acct in zip(parsed.statements, accounts, strict=True)
            ],
            sha256=digest,
            rows_total=total,
            moved_at=utcnow(),
        )
        s.add(draft)
        s.flush()
        import_id = draft.id
        rules = rules_of(s, user_id)
    try:
        done = 0
        for index, (statement, acct) in enumerate(zip(parsed.statements, accounts, strict=True)):
            store = Store(db, import_id, index, acct, rules, earlier)
            done = store.rows(statement, (done, total), progress)
        with db.transaction() as s:
            moved(s, import_id, done, status="draft")
            if parsed.mapping is not None and account is not None and upload.mapping is not None:
                save_mapping(s, user_id, account.id, parsed.columns or [], parsed.mapping)
    except Exception:
        with contextlib.suppress(Exception):  # else it stalls, and DELETE discards it
            discard_rows(db, import_id)
        raise
    return import_id


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


def earlier_import(db: Database, user_id: int, digest: str) -> Earlier | None:
    """The user's last import of the file with this digest that added transactions."""
    with db.read() as s:
        found = s.execute(
            select(StatementImport.id, StatementImport.statements)
            .where(
                StatementImport.user_id == user_id,
                StatementImport.sha256 == digest,
                StatementImport.status.in_(("committing", "committed")),
            )
            .order_by(StatementImport.id.desc())
            .limit(1)
        ).first()
        if found is None:
            return None
        ids = [info.get("account_id") for info in found.statements]
        alive = set(
            s.scalars(
                select(Account.id).where(
                    Account.user_id == user_id, Account.id.in_([i for i in ids if i])
                )
            )
        )
        return Earlier(found.id, [i if i in alive else None for i in ids])


def discard_rows(db: Database, import_id: int) -> None:
    """Delete a draft's rows, BATCH a transaction, then the draft itself."""
    deleted = 0
    while True:
        with db.transaction() as s:
            following = (
                select(ImportRow.id)
                .where(ImportRow.import_id == import_id)
                .order_by(ImportRow.id)
                .limit(BATCH)
                .subquery()
            )
            last, count = s.execute(
                select(func.max(following.c.id), func.count()).select_from(following)
            ).one()
            if last is None:
                s.execute(delete(StatementImport).where(StatementImport.id == import_id))
                return
            rows = IMPORT_ROWS.c
            s.execute(delete(IMPORT_ROWS).where(rows.import_id == import_id, rows.id <= last))
            deleted += int(count)
            moved(s, import_id, deleted)


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
    s: Session,
    user_id: int,
    parsed: ParsedFile,
    given: Account | None,
    upload: Upload,
    earlier: Earlier | None,
) -> list[Account | None]:
    """Each statement's account: the one the same file went to before, else the one holding
    its bank number, else the one given, else a new one (None here: created at commit)."""
    refs = [st.bank_ref for st in parsed.statements if st.bank_ref]
    known = {
        a.bank_ref: a
        for a in s.scalars(
            select(Account).where(Account.user_id == user_id, Account.bank_ref.in_(refs))
        )
    }
    before = earlier.accounts if earlier else []
    found: list[Account | None] = []
    for index, statement in enumerate(parsed.statements):
        account = known.get(statement.bank_ref) if statement.bank_ref else None
        if index < len(before) and before[index] is not None:
            account = s.get(Account, before[index])
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
    statement: ParsedStatement,
    account: Account | None,
    parsed: ParsedFile,
    name: str | None,
    earlier: Earlier | None,
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
        # The earlier import of the same file, whose rows this one's all repeat.
        "same_file_as": earlier.id if earlier else None,
    }
    if parsed.mapping is not None:
        info["columns"], info["mapping"] = parsed.columns, parsed.mapping
    if parsed.not_imported and statement is parsed.statements[0]:
        info["not_imported"] = parsed.not_imported
    return info


class Store:
    """Classifies a statement's rows and writes them, BATCH rows per short transaction."""

    def __init__(
        self,
        db: Database,
        import_id: int,
        index: int,
        account: Account | None,
        rules: list[Rule],
        earlier: Earlier | None,
    ) -> None:
        self.db, self.import_id, self.index, self.rules = db, import_id, index, rules
        self.plain = Plain.of(db.url)
        self.account_id = account.id if account else None
        self.account_currency = account.currency if account else None
        self.again = f"the same file as import {earlier.id}" if earlier else None

    def rows(
        self, statement: ParsedStatement, counted: tuple[int, int], progress: Progress | None
    ) -> int:
        """Store the statement's rows; return the file's rows stored so far."""
        done, total = counted
        first, last, _ = statement.span()
        existing: list[Existing] = []
        if self.account_id is not None and first and last:
            with self.db.read() as s:
                existing = existing_rows(s, self.account_id, first, last)
        matcher = Matcher(existing)
        currency = self.account_currency or statement.currency or "EUR"
        record, classify = self.record, matcher.classify
        batch: list[tuple[Any, ...]] = []
        for row in statement.each():
            batch.append(record(row, classify(row), currency))
            if len(batch) >= BATCH:
                done, batch = self.write(batch, done), []
                if progress:
                    progress(done, total)
        if batch:
            done = self.write(batch, done)
        if progress:
            progress(done, total)
        return done

    def record(self, row: ParsedRow, verdict: Verdict, currency: str) -> tuple[Any, ...]:
        """The import row of a parsed row and its verdict: its values in COLUMNS' order."""
        status, reason = verdict.status, verdict.reason
        if status != "invalid" and (row.currency or currency) != currency:
            status, reason = "invalid", f"in {row.currency}, the account is in {currency}"
        if self.again and status in ("new", "possible_duplicate"):
            status, reason = "duplicate", self.again
        valid = status != "invalid"
        merchant, description, bank_id = row.merchant, row.description, row.bank_id
        posted, amount, matched = row.posted_on, row.amount_minor, verdict.matched
        plain = self.plain
        null = plain.null
        category = (
            category_for(self.rules, merchant, description, amount, currency)
            if self.rules and valid and amount is not None
            else None
        )
        return (
            self.import_id,
            self.index,
            null if self.account_id is None else self.account_id,
            row.position,
            null if posted is None else plain.day(posted),
            amount if valid and amount is not None else null,
            (row.currency or currency)[:3],
            merchant.replace("\x00", "") if "\x00" in merchant else merchant,
            description.replace("\x00", "") if "\x00" in description else description,
            storable(bank_id) if bank_id else null,
            status,
            reason[:255] if reason else null,
            plain.true if status == "new" else plain.false,
            null if matched is None else matched,
            null if category is None else category,
        )

    def write(self, batch: list[tuple[Any, ...]], done: int) -> int:
        """Insert a batch and move the progress, in one short transaction."""
        with self.db.transaction() as s:
            bulk_insert(s, IMPORT_ROWS, COLUMNS, batch)
            moved(s, self.import_id, done + len(batch))
        return done + len(batch)


def existing_rows(
    s: Session, account_id: int, first: date, last: date, but: int | None = None
) -> list[Existing]:
    """The account's transactions a statement over [first, last] may repeat (one index range),
    but those import `but` added."""
    window = timedelta(days=POSSIBLE_DAYS)
    t = Transaction
    query = select(t.id, t.posted_on, t.amount_minor, t.merchant, t.description, t.bank_id).where(
        t.account_id == account_id, t.posted_on.between(first - window, last + window)
    )
    if but is not None:
        query = query.where((t.import_id != but) | t.import_id.is_(None))
    rows = s.execute(query)
    return [Existing(*row) for row in rows]


def storable(text: str) -> str:
    """`text` without NUL characters, which PostgreSQL refuses in any string."""
    return text.replace("\x00", "") if "\x00" in text else text

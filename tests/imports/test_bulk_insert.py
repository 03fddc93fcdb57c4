"""A draft's rows as bulk_insert gives them to SQLite: the NULL marker stored as NULL, every
other value as it is, and None still NULL."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from sqlalchemy import select

from models.db import Database
from models.migrate import upgrade
from services.imports.drafts import COLUMNS, IMPORT_ROWS
from services.imports.steps import SQLITE_NULL, Plain, bulk_insert
from tests.imports.conftest import empty_draft


def test_the_null_marker_is_stored_as_null_and_text_like_it_as_text(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'bulk.db'}"
    upgrade(url)
    db = Database(url)
    plain = Plain.of(url)
    assert (plain.null, plain.day(date(2026, 3, 1)), plain.true) == (SQLITE_NULL, "2026-03-01", 1)
    try:
        import_id = empty_draft(db, "bulk")
        null = plain.null
        marked = (import_id, 0, null, 1, null, null, "EUR", "0.5", "", null, "invalid", "why")
        typed = (import_id, 0, None, 2, date(2026, 3, 1), 0, "EUR", "Shop", "0.5", "0.5", "new")
        with db.transaction() as s:
            rows = [(*marked, plain.false, null, null), (*typed, None, True, None, "0.5")]
            bulk_insert(s, IMPORT_ROWS, COLUMNS, rows)
        with db.read() as s:
            c = IMPORT_ROWS.c
            found = s.execute(
                select(
                    c.account_id, c.posted_on, c.amount_minor, c.merchant, c.bank_id, c.reason,
                    c.include, c.matched_transaction_id, c.category,
                ).order_by(c.position)
            ).all()  # fmt: skip
        assert [tuple(r) for r in found] == [
            (None, None, None, "0.5", None, "why", False, None, None),
            (None, date(2026, 3, 1), 0, "Shop", "0.5", None, True, None, "0.5"),
        ]
    finally:
        db.dispose()

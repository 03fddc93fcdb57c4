"""The import flows on PostgreSQL: draft, commit once, duplicates, review, undo."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.backends import migrated_postgres
from tests.imports.conftest import ODD_CSV, Importer
from tests.imports.test_reconciliation import NEGATIVE


@pytest.fixture
def db_url() -> Iterator[str]:
    """A fresh migrated PostgreSQL database (skipped when PostgreSQL is down)."""
    with migrated_postgres() as url:
        yield url


def test_the_whole_review_on_postgresql(importer: Importer) -> None:
    first = importer.upload("multi_account.ofx").json
    assert importer.commit(first["id"]).json["added"] == 4
    assert importer.commit(first["id"]).json["added"] == 0
    again = importer.upload("multi_account.ofx").json
    assert again["counts"]["duplicate"] == 4

    csv = importer.upload("german.csv", currency="EUR", account_name="Girokonto").json
    rows = importer.rows(csv["id"])
    assert importer.patch(csv["id"], rows[0]["id"], {"category": "Food"}).status_code == 200
    assert importer.patch(csv["id"], rows[2]["id"], {"include": False}).status_code == 200
    assert importer.commit(csv["id"]).json["added"] == 3
    assert len(importer.transactions()) == 7
    undone = importer.delete(csv["id"]).json
    assert undone["removed_transactions"] == 3 and len(importer.transactions()) == 4

    mapping = json.dumps({"date": "Posted", "payee": "What", "amount": "Value"})
    tsv = importer.upload("unknown_columns.tsv", currency="EUR", mapping=mapping)
    assert tsv.status_code == 201 and tsv.json["counts"]["new"] == 2
    assert importer.commit(tsv.json["id"]).json["added"] == 2


def test_nul_characters_and_huge_amounts_never_reach_the_database(importer: Importer) -> None:
    draft = importer.upload("odd.csv", ODD_CSV, currency="EUR", account_name="Giro")
    assert draft.status_code == 201, draft.json
    odd = importer.rows(draft.json["id"], "&status=invalid")
    assert [r["merchant"] for r in odd] == ["Huge"] and "15 digits" in odd[0]["reason"]
    assert draft.json["counts"]["new"] == 12_001
    assert importer.commit(draft.json["id"]).json["added"] == 12_001
    found = importer.get("/api/transactions?merchant=NulShop").json["transactions"]
    assert [t["amount"] for t in found] == ["-2.00"]


def test_sums_of_negative_amounts_in_parts_are_exact_on_postgresql(importer: Importer) -> None:
    reconciliation = importer.upload("neg.sta", NEGATIVE).json["accounts"][0]["reconciliation"]
    assert (reconciliation["rows_total"], reconciliation["balanced"]) == ("-1999999999.25", True)


def test_a_value_copy_refuses_is_raised_as_sqlalchemy_raises_it(db_url: str) -> None:
    from sqlalchemy import exc

    from models.db import Database
    from services.imports.drafts import COLUMNS, IMPORT_ROWS
    from services.imports.steps import bulk_insert
    from tests.imports.conftest import empty_draft

    db = Database(db_url)
    try:
        import_id = empty_draft(db, "copy")
        row = (import_id, 0, None, 1, None, -100, "EUR", "Shop", "", None, "new", None, True)
        with db.transaction() as s:
            bulk_insert(s, IMPORT_ROWS, COLUMNS, [(*row, None, None)] * 3)
        with pytest.raises(exc.DataError), db.transaction() as s:
            bulk_insert(s, IMPORT_ROWS, COLUMNS, [(*row[:6], "EUROS", *row[7:], None, None)])
        with db.read() as s:
            assert s.query(IMPORT_ROWS).count() == 3
    finally:
        db.dispose()

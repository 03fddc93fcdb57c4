"""The import flows on PostgreSQL: draft, commit once, duplicates, review, undo."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from models.migrate import upgrade
from tests.backends import fresh_postgres
from tests.imports.conftest import Importer


@pytest.fixture
def db_url() -> Iterator[str]:
    """A fresh migrated PostgreSQL database (skipped when PostgreSQL is down)."""
    with fresh_postgres() as url:
        upgrade(url)
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

"""Every foreign key a delete of an import, a transaction or an account walks has an index
leading with its columns, on SQLite and on PostgreSQL: without one each deleted row scans
the referring table (an undo of 100,000 rows never finished)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import create_engine, inspect

from models.migrate import upgrade
from tests.backends import migrated_postgres

TABLES = ("transactions", "imports", "import_rows", "import_mappings", "accounts", "categories")


def _unindexed(url: str) -> list[str]:
    engine = create_engine(url)
    try:
        found = inspect(engine)
        missing: list[str] = []
        for table in found.get_table_names():
            leads = [ix["column_names"] for ix in found.get_indexes(table)]
            leads += [u["column_names"] for u in found.get_unique_constraints(table)]
            leads.append(found.get_pk_constraint(table)["constrained_columns"])
            for fk in found.get_foreign_keys(table):
                if fk["referred_table"] not in TABLES and table not in TABLES:
                    continue
                columns = fk["constrained_columns"]
                if not any(list(lead[: len(columns)]) == columns for lead in leads):
                    missing.append(f"{table}.{','.join(columns)} -> {fk['referred_table']}")
        return missing
    finally:
        engine.dispose()


def test_every_foreign_key_of_the_import_tables_is_indexed_on_sqlite(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'fk.db'}"
    upgrade(url)
    assert _unindexed(url) == []


def test_every_foreign_key_of_the_import_tables_is_indexed_on_postgresql() -> None:
    with migrated_postgres() as url:
        assert _unindexed(url) == []


@pytest.mark.parametrize("revision", ["0014"])
def test_before_0015_matched_transaction_id_had_none(tmp_path: Path, revision: str) -> None:
    url = f"sqlite:///{tmp_path / 'old.db'}"
    upgrade(url, revision)
    assert _unindexed(url) == ["import_rows.matched_transaction_id -> transactions"]

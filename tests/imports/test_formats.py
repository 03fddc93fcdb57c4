"""Every format's sample file imported through the API: its rows, its reconciliation, its commit."""

from __future__ import annotations

from typing import Any

import pytest

from tests.imports.conftest import Importer

# sample, form fields, expected rows (date, amount, merchant, bank id), reconciliation per account
CASES: dict[str, tuple[dict[str, Any], list[tuple[str, str, str, str | None]], list[Any]]] = {
    "multi_account.ofx": (
        {},
        [
            ("2026-03-05", "-42.50", "Blue Heron Bakery", "CHK-0001"),
            ("2026-03-12", "-9.99", "Streamflix", "CHK-0002"),
            ("2026-03-15", "2500.00", "Acme Payroll", "CHK-0003"),
            ("2026-03-20", "-63.20", "Harbor Lights Cinema", "CC-0001"),
        ],
        [("account", "2447.51", "0.00"), ("account", "-63.20", "0.00")],
    ),
    "statement_v2.qfx": (
        {},
        [
            ("2026-03-08", "-15.00", "Puffin Bike Repairs", "SAV-1"),
            ("2026-03-25", "100.00", "Transfer in", "SAV-2"),
            ("2026-03-11", "-7.25", "Moorland Pie Co", "CUR-1"),
        ],
        [("account", "80.00", "-5.00"), ("account", "-7.25", "0.00")],
    ),
    "checking.qif": (
        {"currency": "USD", "account_name": "Everyday"},
        [
            ("2026-03-02", "-18.75", "Copper Kettle Tea Room", None),
            ("2026-03-09", "-18.75", "Copper Kettle Tea Room", None),
            ("2026-03-14", "1200.00", "Northwind Consulting", None),
        ],
        [None],
    ),
    "statement.camt.xml": (
        {},
        [
            ("2026-03-07", "-80.00", "Kranich Buchhandlung", "BANKREF-0001"),
            ("2026-03-18", "20.00", "Jonas Weber", "BANKREF-0002"),
        ],
        [("file", "430.00", "-10.00")],
    ),
    "statement.sta": (
        {},
        [
            ("2026-03-05", "-25.40", "Lindenhof Metzgerei Kartenzahlung", None),
            ("2026-03-06", "-25.40", "Lindenhof Metzgerei Kartenzahlung", None),
            ("2026-03-10", "150.00", "Erstattung Versicherung", None),
        ],
        [("file", "1099.20", "0.00")],
    ),
    "german.csv": (
        {"currency": "EUR", "account_name": "Girokonto", "locale": "de_DE"},
        [
            ("2026-03-05", "-4.20", "Bäckerei Sonnenschein", None),
            ("2026-03-05", "-4.20", "Bäckerei Sonnenschein", None),
            ("2026-03-12", "-1234.56", "Stadtwerke München", None),
            ("2026-03-15", "2500.00", "Arbeitgeber GmbH", None),
        ],
        [None],
    ),
}


@pytest.mark.parametrize("sample", sorted(CASES))
def test_each_format_is_imported_reviewed_and_committed(importer: Importer, sample: str) -> None:
    form, expected, reconciled = CASES[sample]
    reply = importer.upload(sample, **form)
    assert reply.status_code == 201, reply.json
    draft = reply.json
    rows = importer.rows(draft["id"])
    assert [(r["date"], r["amount"], r["merchant"], r["bank_id"]) for r in rows] == expected
    assert {r["status"] for r in rows} == {"new"}
    found = [
        None if a["reconciliation"] is None else (
            a["reconciliation"]["basis"], a["reconciliation"]["closing"],
            a["reconciliation"]["difference"],
        )
        for a in draft["accounts"]
    ]  # fmt: skip
    assert found == reconciled
    for account in draft["accounts"]:
        if account["reconciliation"] is not None:
            balanced = account["reconciliation"]["difference"] == "0.00"
            assert account["reconciliation"]["balanced"] is balanced

    assert importer.commit(draft["id"]).json["added"] == len(expected)
    stored = {(t["date"], t["amount"], t["merchant"]) for t in importer.transactions()}
    assert stored == {row[:3] for row in expected}
    # The assistant's read tool finds a merchant that only this file has.
    merchant = expected[0][2]
    listed = importer.get(f"/api/transactions?merchant={merchant}").json
    assert listed["count"] == sum(1 for row in expected if row[2] == merchant)


def test_a_committed_statement_sets_the_balance_it_states(importer: Importer) -> None:
    draft = importer.upload("statement.sta").json
    committed = importer.commit(draft["id"]).json
    account_id = committed["accounts"][0]["account_id"]
    assert importer.get(f"/api/accounts/{account_id}").json["balance"] == "1099.20"
    importer.delete(draft["id"])
    assert importer.get(f"/api/accounts/{account_id}").json["balance"] == "0.00"

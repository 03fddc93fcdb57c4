"""Every format's sample file imported through the API: its rows, its reconciliation, its commit."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.imports.conftest import SAMPLES, Importer

# One app for the module's tests, its database emptied after each (tests/conftest.py).
pytestmark = pytest.mark.shared_app

# Per sample file: the form fields it is sent with, its rows as the draft shows them, and each
# account's reconciliation (basis, closing balance, difference), or null where none is stated.
EXPECTED: dict[str, dict[str, Any]] = json.loads((SAMPLES / "expected.json").read_text())


@pytest.mark.parametrize("sample", sorted(EXPECTED))
def test_each_format_is_imported_reviewed_and_committed(importer: Importer, sample: str) -> None:
    form = EXPECTED[sample]["form"]
    expected = [tuple(r.values()) for r in EXPECTED[sample]["rows"]]
    reconciled = [r and tuple(r.values()) for r in EXPECTED[sample]["reconciliation"]]
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


def test_a_file_that_names_no_currency_is_committed_in_the_one_sent(importer: Importer) -> None:
    data = (
        b"OFXHEADER:100\nDATA:OFXSGML\nVERSION:102\n\n<OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS>"
        b"<CURDEF></CURDEF><BANKACCTFROM><ACCTID>55501234</ACCTID></BANKACCTFROM><BANKTRANLIST>"
        b"<STMTTRN><TRNTYPE>DEBIT</TRNTYPE><DTPOSTED>20240302</DTPOSTED><TRNAMT>-8.40</TRNAMT>"
        b"<NAME>Kiosk</NAME></STMTTRN></BANKTRANLIST></STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>"
    )
    draft = importer.upload("export.ofx", data, currency="EUR").json
    committed = importer.commit(draft["id"])
    assert committed.status_code == 200, committed.json
    account_id = committed.json["accounts"][0]["account_id"]
    account = importer.get(f"/api/accounts/{account_id}").json
    assert (account["currency"], account["balance"]) == ("EUR", "-8.40")

"""Reconciliation per statement: a multi-statement file reconciled statement by statement and
chained, a new account opening at the statement's own opening, sums past 64 bits exact."""

from __future__ import annotations

import pytest

from tests.imports.conftest import Importer

# One app for the module's tests, its database emptied after each (tests/conftest.py).
pytestmark = pytest.mark.shared_app

STATEMENT = """:20:STMT{n}
:25:10020030/1234567890
:28C:{n}/1
:60F:C26100{n}EUR{opening}
:61:26100{n}100{n}D10,00NMSCNONREF
:86:Kiosk
:62F:C26100{n}EUR{closing}
-
"""


def mt940(*balances: tuple[str, str]) -> bytes:
    """Statements of one account, the nth with (opening, closing) and one debit of 10.00."""
    return "".join(
        STATEMENT.format(n=n, opening=opening, closing=closing)
        for n, (opening, closing) in enumerate(balances, start=1)
    ).encode()


def test_each_statement_of_a_file_is_reconciled_on_its_own_and_chained(importer: Importer) -> None:
    data = mt940(("100,00", "90,00"), ("90,00", "80,00"), ("75,00", "65,00"))
    draft = importer.upload("three.sta", data).json
    shown = [
        (r["opening"], r["closing"], r["difference"], r["balanced"], r["chained"])
        for r in (a["reconciliation"] for a in draft["accounts"])
    ]
    assert shown == [
        ("100.00", "90.00", "0.00", True, None),
        ("90.00", "80.00", "0.00", True, True),
        ("75.00", "65.00", "0.00", True, False),  # 5.00 went missing between two statements
    ]
    committed = importer.commit(draft["id"]).json
    ids = {a["account_id"] for a in committed["accounts"]}
    assert len(ids) == 1  # one account, found again by its number for each statement
    account = importer.get(f"/api/accounts/{ids.pop()}").json
    assert account["balance"] == "65.00"


def test_a_new_account_opens_at_the_statements_own_opening(importer: Importer) -> None:
    opening_only = (
        b":20:X\n:25:DE02100100100006820101\n:60F:C261001EUR500,00\n"
        b":61:2610011001D20,00NMSCNONREF\n:86:Shop\n-\n"
    )
    committed = importer.commit(importer.upload("open.sta", opening_only).json["id"]).json
    account = importer.get(f"/api/accounts/{committed['accounts'][0]['account_id']}").json
    assert account["balance"] == "480.00"


def test_an_ofx_into_a_new_account_balances_from_its_ledger_balance(importer: Importer) -> None:
    draft = importer.upload("statement_v2.qfx").json
    first = draft["accounts"][0]["reconciliation"]
    assert (first["basis"], first["opening"], first["closing"], first["balanced"]) == (
        "derived", "-5.00", "80.00", True,
    )  # fmt: skip


NEGATIVE = (
    b":20:NEG\n:25:DE02100100100006820101\n:60F:C261001EUR0,00\n"
    b":61:2610011001D1,50NMSCNONREF\n:86:A\n:61:2610011001D2000000000,75NMSCNONREF\n:86:B\n"
    b":61:2610011001C3,00NMSCNONREF\n:86:C\n:62F:D261001EUR1999999999,25\n-\n"
)


def test_sums_of_negative_amounts_in_parts_are_exact(importer: Importer) -> None:
    reconciliation = importer.upload("neg.sta", NEGATIVE).json["accounts"][0]["reconciliation"]
    assert (reconciliation["rows_total"], reconciliation["balanced"]) == ("-1999999999.25", True)


def test_sums_past_64_bits_are_exact(importer: Importer) -> None:
    rows = "".join(
        f":61:2610011001C9999999999999,99NMSCNONREF\n:86:Big {i}\n" for i in range(10_000)
    )
    data = (
        f":20:BIG\n:25:DE02100100100006820101\n:60F:C261001EUR0,00\n{rows}:62F:C261001EUR1,00\n-\n"
    )
    reply = importer.upload("big.sta", data.encode())
    assert reply.status_code == 201, reply.json
    reconciliation = reply.json["accounts"][0]["reconciliation"]
    assert reconciliation["rows_total"] == "99999999999999900.00"  # past 2**63 minor units
    assert reconciliation["difference"] == "-99999999999999899.00"


def test_what_a_file_holds_and_is_not_imported_is_named(importer: Importer) -> None:
    data = (
        "<OFX><INVSTMTMSGSRSV1><INVSTMTTRNRS><INVSTMTRS><CURDEF>USD<INVACCTFROM><BROKERID>b"
        "<ACCTID>9876</INVACCTFROM><INVTRANLIST><BUYSTOCK><INVBUY><TOTAL>-10</INVBUY></BUYSTOCK>"
        "<INVBANKTRAN><STMTTRN><DTPOSTED>20261001<TRNAMT>5.00<FITID>I1<NAME>Interest"
        "</STMTTRN></INVBANKTRAN></INVTRANLIST></INVSTMTRS></INVSTMTTRNRS></INVSTMTMSGSRSV1></OFX>"
    )
    draft = importer.upload("broker.ofx", data.encode()).json
    assert draft["not_imported"] == ["investment statement of 9876: 1 investment transaction"]
    assert draft["counts"]["new"] == 1

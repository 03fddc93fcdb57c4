"""Each bank's CSV export, from a file written in its exact layout (tests/imports/layouts:
header, preamble, delimiter, quoting, date and number format, sign convention, encoding),
imported through the API: every row, signed right, in the right currency, the account named
from the file, and the balances a running-balance column states."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from statements.layouts import LAYOUTS
from tests.imports.conftest import Importer

# One app for the module's tests, its database emptied after each (tests/conftest.py).
pytestmark = pytest.mark.shared_app

LAYOUT_FILES = Path(__file__).resolve().parent / "layouts"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "imports.md"


class Expected(NamedTuple):
    """What a layout's file imports as."""

    layout: str
    currency: str  # sent when the file does not say it; checked either way
    amounts: tuple[str, ...]  # every row's amount in file order ("" for a row not booked)
    merchant: str  # the first row's
    last_digits: str | None = None
    balances: tuple[str, str] | None = None  # (opening, closing) a balance column states


EXPECTED: dict[str, Expected] = {
    "chase_checking.csv": Expected(
        "Chase (checking)", "USD", ("-24.99", "1500.00", "-25.00"),
        "AMAZON MKTPL*ZK4RT1AB2 Amzn.com/bill WA       10/02", None, ("0.00", "1450.01"),
    ),
    "chase_credit.csv": Expected(
        "Chase (credit card)", "USD", ("-6.75", "250.00", "-85.50"), "BLUE BOTTLE COFFEE"
    ),
    "bofa_checking.csv": Expected(
        "Bank of America (checking)", "USD", ("-1200.00", "2500.00", "-12.34"),
        "ZELLE PAYMENT TO JOHN SMITH Conf# abc123", None, ("1000.00", "2287.66"),
    ),
    "bofa_credit.csv": Expected(
        "Bank of America (credit card)", "USD", ("-42.17", "-15.49", "500.00"),
        "AMAZON.COM*AB12C3D4E",
    ),
    "wells_fargo.csv": Expected(
        "Wells Fargo", "USD", ("-45.10", "2500.00", "-120.00"),
        "PURCHASE AUTHORIZED ON 10/02 SAFEWAY #1234 SAN FRANCISCO CA S386275123456789 CARD 1234",
    ),
    "capital_one.csv": Expected(
        "Capital One (credit card)", "USD", ("-41.25", "300.00", "-63.40"),
        "SHELL OIL 12345678", "1234",
    ),
    "citi.csv": Expected(
        "Citi (credit card)", "USD", ("-52.18", "200.00", ""),
        "TARGET        00012345 BROOKLYN NY",
    ),
    "amex_us.csv": Expected(
        "American Express (US)", "USD", ("-11.18", "-64.12", "300.00"), "UBER"
    ),
    "amex_uk.csv": Expected(
        "American Express (UK)", "GBP", ("-8.45", "150.00"), "PRET A MANGER LONDON"
    ),
    "discover.csv": Expected(
        "Discover", "USD", ("-11.99", "100.00", "-54.30"), "SPOTIFY USA 8777781161 NY"
    ),
    "barclays.csv": Expected(
        "Barclays", "GBP", ("-10.99", "2450.00", "-51.30"),
        "NETFLIX.COM         ON 02 OCT          BCC", "2170",
    ),
    "hsbc_uk.csv": Expected(
        "HSBC UK", "GBP", ("-23.45", "2450.00", "-8.10"), "TESCO STORES 6543 LONDON"
    ),
    "lloyds.csv": Expected(
        "Lloyds", "GBP", ("-23.50", "2450.00"), "TESCO STORES 3297", "5678", ("0.00", "2426.50")
    ),
    "nationwide.csv": Expected(
        "Nationwide", "GBP", ("1000.00", "-10.99", "-36.91", "550.00"), "0275/636 848 557",
        "2345", ("0.00", "1502.10"),
    ),
    "monzo.csv": Expected("Monzo", "GBP", ("-42.60", "1450.00", "-3.21"), "Screwfix"),
    "starling.csv": Expected(
        "Starling", "GBP", ("1500.00", "-1000.00", "-23.45"), "An Employer", None,
        ("4000.00", "4476.55"),
    ),
    "revolut.csv": Expected(
        "Revolut", "EUR", ("300.00", "-13.99", "-102.00", ""), "Top-up by *1234", None,
        ("0.00", "184.01"),
    ),
    "n26.csv": Expected("N26", "EUR", ("2500.00", "-23.45", "-9.32"), "ACME GmbH"),
    "n26_2023.csv": Expected("N26 (before 2024)", "EUR", ("2500.00", "-31.20"), "ACME GmbH"),
    "ing_de.csv": Expected(
        "ING Germany", "EUR", ("-45.20", "2500.00", "-1220.24"), "REWE Markt GmbH", "7890",
        ("0.00", "1234.56"),
    ),
    "deutsche_bank.csv": Expected(
        "Deutsche Bank", "EUR", ("-85.00", "2500.00", "-1000.00"), "Stadtwerke München", "3000"
    ),
    "sparkasse.csv": Expected(
        "Sparkasse", "EUR", ("-55.08", "2500.00", ""), "Rundfunk ARD, ZDF, DRadio", "7890"
    ),
    "dkb.csv": Expected("DKB", "EUR", ("-45.20", "2500.00", ""), "REWE Markt GmbH", "4050"),
    "commerzbank.csv": Expected(
        "Commerzbank", "EUR", ("-2040.00", "3210.50", "-3.90"),
        "Stadtwerke Köln GmbH Abschlag 10/2026 End-to-End-Ref.: 123456 Mandatsref: MR-1 "
        "Gläubiger-ID: DE98ZZZ09999999999 SEPA-BASISLASTSCHRIFT wiederh", "3000",
    ),
    "bnp_paribas_fortis.csv": Expected(
        "BNP Paribas Fortis", "EUR", ("18.00", "-2720.12", ""), "DUPONT JEAN", "7034"
    ),
    "rabobank.csv": Expected(
        "Rabobank", "EUR", ("2500.00", "-45.20", "-9.32"), "ACME BV", "3637",
        ("1000.00", "3445.48"),
    ),
    "abn_amro.tab": Expected(
        "ABN AMRO", "EUR", ("2500.00", "-45.20", "-9.32"),
        "/TRTP/SEPA OVERBOEKING/IBAN/NL20INGB0001234567/BIC/INGBNL2A/NAME/ACME BV/REMI/Salaris "
        "oktober/EREF/NOTPROVIDED", "6789", ("1000.00", "3445.48"),
    ),
    "asn_bank.csv": Expected(
        "ASN Bank", "EUR", ("-750.00", "-2.10", "2600.00"), "Jansen Verhuur", "6789"
    ),
    "ing_nl.csv": Expected(
        "ING Netherlands", "EUR", ("-45.20", "2500.00"), "Albert Heijn 1234", "6789",
        ("500.00", "2954.80"),
    ),
    "wise.csv": Expected(
        "Wise", "EUR", ("1000.00", "-12.40", "-100.00", "-0.42"), "ACME BV", None,
        ("0.00", "887.18"),
    ),
    "paypal.csv": Expected(
        "PayPal", "USD", ("1206.60", "", "-19.99"), "Jane Buyer", None, ("0.00", "1186.61")
    ),
}  # fmt: skip
BY_NAME = {layout.name: layout for layout in LAYOUTS}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_banks_export_imports_in_its_own_layout(importer: Importer, name: str) -> None:
    expected = EXPECTED[name]
    layout = BY_NAME[expected.layout]
    reply = importer.upload(name, (LAYOUT_FILES / name).read_bytes(), currency=expected.currency)
    assert reply.status_code == 201, reply.json
    account = reply.json["accounts"][0]
    assert (account["bank_name"], account["kind"]) == (layout.bank, layout.kind)
    assert account["currency"] == expected.currency
    assert account["last_digits"] == expected.last_digits
    rows = importer.rows(reply.json["id"])
    assert tuple(r["amount"] or "" for r in rows) == expected.amounts
    assert rows[0]["merchant"] == expected.merchant[:120]
    for row, amount in zip(rows, expected.amounts, strict=True):
        assert (row["status"] == "invalid") is (amount == ""), row
        if amount == "":
            assert "not booked" in row["reason"], row
    reconciliation = account["reconciliation"]
    if expected.balances is None:
        assert reconciliation is None
    else:
        assert (reconciliation["opening"], reconciliation["closing"]) == expected.balances
        assert reconciliation["balanced"] is True
        booked = sum(Decimal(a) for a in expected.amounts if a)
        assert Decimal(reconciliation["rows_total"]) == booked


def test_every_layout_has_a_file_and_a_row_in_the_docs() -> None:
    tested = {e.layout for e in EXPECTED.values()}
    assert tested == set(BY_NAME)
    table = DOCS.read_text(encoding="utf-8")
    for layout in LAYOUTS:
        assert f"| {layout.name} |" in table, layout.name
    assert len(LAYOUTS) >= 20


def test_a_card_payment_abroad_keeps_its_local_amount(importer: Importer) -> None:
    draft = importer.upload("monzo.csv", (LAYOUT_FILES / "monzo.csv").read_bytes()).json
    abroad = importer.rows(draft["id"])[2]
    assert (abroad["amount"], abroad["currency"]) == ("-3.21", "GBP")
    assert abroad["description"] == "Grab* A-123 (-61000.00 IDR)"


def test_a_sign_convention_chosen_in_the_mapping_is_saved_for_the_account(
    importer: Importer,
) -> None:
    data = b"Date,Merchant,Charge\n01/10/2026,Coffee,3.50\n02/10/2026,Payment,-20.00\n"
    mapping = json.dumps(
        {"date": "Date", "payee": "Merchant", "amount": "Charge", "sign": "charges_positive"}
    )
    first = importer.upload("card.csv", data, currency="USD", mapping=mapping).json
    assert [r["amount"] for r in importer.rows(first["id"])] == ["-3.50", "20.00"]
    committed = importer.commit(first["id"]).json
    account_id = committed["accounts"][0]["account_id"]
    more = data + b"03/10/2026,Lunch,12.00\n"
    second = importer.upload("card.csv", more, account_id=account_id).json
    rows = importer.rows(second["id"])
    assert [(r["amount"], r["status"]) for r in rows] == [
        ("-3.50", "duplicate"),
        ("20.00", "duplicate"),
        ("-12.00", "new"),
    ]


def test_a_header_that_is_not_recognised_offers_the_real_column_names(
    importer: Importer,
) -> None:
    data = (
        "Kontoauszug;Girokonto\nIBAN;DE12 5001 0517 1234 5678 90\n\n"
        "Tag;Gegenseite;Wert\n01.10.2026;Bäckerei;-4,20\n02.10.2026;Arbeitgeber;2.500,00\n"
    ).encode()
    reply = importer.upload("odd.csv", data, currency="EUR")
    assert reply.status_code == 422 and reply.json["error"]["code"] == "mapping_required"
    details = reply.json["error"]["details"]
    assert details["columns"] == ["Tag", "Gegenseite", "Wert"]
    assert details["header_line"] == 4
    mapping = '{"date": "Tag", "payee": "Gegenseite", "amount": "Wert"}'
    fixed = importer.upload("odd.csv", data, currency="EUR", mapping=mapping)
    assert fixed.status_code == 201, fixed.json
    assert [r["amount"] for r in importer.rows(fixed.json["id"])] == ["-4.20", "2500.00"]
    assert fixed.json["accounts"][0]["last_digits"] == "7890"


def _row(rows: list[dict[str, Any]], merchant: str) -> dict[str, Any]:
    return next(r for r in rows if r["merchant"] == merchant)


def test_payer_or_payee_by_the_direction_of_the_money(importer: Importer) -> None:
    draft = importer.upload("dkb.csv", (LAYOUT_FILES / "dkb.csv").read_bytes()).json
    rows = importer.rows(draft["id"])
    assert _row(rows, "ACME GmbH")["amount"] == "2500.00"  # the payer of money in
    assert _row(rows, "REWE Markt GmbH")["amount"] == "-45.20"  # the payee of money out

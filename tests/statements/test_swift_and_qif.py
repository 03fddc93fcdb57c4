"""MT940 statement by statement, QIF sections per account, CAMT.052/.053/.054 as banks write
them."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from domain.errors import Unprocessable
from statements.camt import read_camt
from statements.details import read_details
from statements.mt940file import read_mt940
from statements.qif import read_qif

SHARED = Path(__file__).resolve().parents[3] / "shared" / "statements"
TWO_STATEMENTS = """{1:F01ABNANL2AXXXX0000000000}{2:O9401506110804RABONL2UAXXX0000000000}{4:
:20:940S110804
:25:NL91RABO0315273637EUR
:28C:1/1
:60F:C110803EUR100,00
:61:1108040804D10,00N940NONREF
:86:/NAME/ALBERT HEIJN/REMI/Boodschappen
:61:1108040804D10,00N940EREF+123//NONREF
:86:/NAME/ALBERT HEIJN/REMI/Boodschappen
:61:1108040804C5,00N940NL91RABO0315273637
:86:?00GUTSCHRIFT?20Rueckzahlung?21 Oktober?32Jan Jansen
:62F:C110804EUR85,00
-}
{4:
:20:940S110805
:25:NL91RABO0315273637EUR
:28C:2/1
:60F:C110804EUR85,00
:61:1108050805D25,00N940NONREF
:86:Huur
:62F:C110805EUR60,00
-}
"""


def shared(name: str) -> Path:
    path = SHARED / name
    if not path.is_file():
        pytest.skip("../shared/statements is missing")
    return path


def test_references_are_no_bank_ids_and_rows_are_kept_by_occurrence() -> None:
    parsed = read_mt940(TWO_STATEMENTS)
    first, second = parsed.statements
    rows = list(first.each())
    assert [(r.amount_minor, r.bank_id) for r in rows] == [
        (-1000, None),
        (-1000, None),
        (500, None),
    ]
    assert [r.merchant for r in rows] == ["ALBERT HEIJN", "ALBERT HEIJN", "Jan Jansen"]
    assert rows[2].description == "Rueckzahlung Oktober"
    assert (first.opening_minor, first.closing_minor) == (10000, 8500)
    assert (second.opening_minor, second.closing_minor) == (8500, 6000)
    assert [r.amount_minor for r in second.each()] == [-2500]
    assert first.bank_ref == second.bank_ref == "NL91RABO0315273637EUR"
    assert first.bank_name == "RABONL2U" and first.currency == "EUR"


def test_a_value_date_of_30_february_takes_the_booking_date() -> None:
    statement = read_mt940(shared("mt940__self-provided__february_30.sta").read_text()).statements[
        0
    ]
    assert [r.posted_on for r in statement.each()] == [date(2016, 3, 1)]


def test_an_entry_cut_over_two_lines_is_read_whole() -> None:
    text = shared("mt940__self-provided__sparkassen.sta").read_text()
    rows = list(read_mt940(text).statements[0].each())
    assert [(r.posted_on, r.amount_minor) for r in rows] == [(date(2018, 11, 26), 3000)]


def test_an_mt942_interim_report_imports_its_entries() -> None:
    statement = read_mt940(shared("mt940__mBank__mt942.sta").read_text()).statements[0]
    assert statement.currency == "PLN" and statement.span()[2] == 3


def test_fragments_without_entries_hold_no_transactions() -> None:
    with pytest.raises(Unprocessable) as caught:
        read_mt940(":60F:C100318EUR380115,12\n")
    assert caught.value.code == "no_transactions"


def test_details_are_read_whichever_way_they_are_written() -> None:
    german = read_details("166?00GUTSCHRIFT?20EREF+123?21SVWZ+Miete?32KARL?33 KAUFMANN")
    assert (german.name, german.posting_text, german.purpose) == (
        "KARL KAUFMANN", "GUTSCHRIFT", "EREF+123SVWZ+Miete",
    )  # fmt: skip
    dutch = read_details("/TRTP/SEPA OVERBOEKING/NAME/ACME BV/REMI/Factuur 42/EREF/NOTPROVIDED")
    assert (dutch.name, dutch.purpose) == ("ACME BV", "Factuur 42")
    assert read_details("Betaalautomaat 14:23").purpose == "Betaalautomaat 14:23"


QIF = """!Account
NEveryday
TBank
^
!Type:Bank
D10/01'2026
T-1,234.56
PLandlord
MRent
^
D10/15/2026
U2,500.00
PACME
^
!Type:Invst
D10/02/2026
NBuy
YAAPL
^
!Account
NVisa
TCCard
^
!Type:CCard
D10/03/2026
T-9.99
PStreamflix
^
!Type:Memorized
T-5.00
PCoffee
^
"""


def test_qif_sections_are_statements_per_account_and_the_rest_is_named() -> None:
    parsed = read_qif(QIF, currency="USD")
    bank, card = parsed.statements
    assert (bank.name, bank.kind, card.name, card.kind) == (
        "Everyday", "checking", "Visa", "credit_card",
    )  # fmt: skip
    assert [(r.posted_on, r.amount_minor) for r in bank.each()] == [
        (date(2026, 10, 1), -123456),
        (date(2026, 10, 15), 250000),
    ]
    assert [r.merchant for r in card.each()] == ["Streamflix"]
    assert parsed.not_imported == ["1 investment transaction", "1 memorized transaction"]


def test_a_qif_with_only_an_investment_section_says_so() -> None:
    with pytest.raises(Unprocessable) as caught:
        read_qif("!Type:Invst\nD1/1/2026\nNBuy\n^\n", currency="USD")
    assert caught.value.code == "no_transactions"
    assert caught.value.details == {"not_imported": ["1 investment transaction"]}


def test_qif_dates_are_day_first_when_a_value_says_so() -> None:
    parsed = read_qif(
        "!Type:Bank\nD22/12/2017\nT1.00\nPA\n^\nD02/01/2018\nT2.00\nPB\n^\n", currency=None
    )
    assert [r.posted_on for r in parsed.statements[0].each()] == [
        date(2017, 12, 22),
        date(2018, 1, 2),
    ]


@pytest.mark.parametrize(
    "name, kind",
    [
        ("camt052_054/camt__camt052.v2.xml", "camt052"),
        ("camt052_054/camt__camt054.v4.xml", "camt054"),
        ("camt__camt053.v3.xml", "camt053"),
    ],
)
def test_camt_052_053_and_054_are_read(name: str, kind: str) -> None:
    parsed = read_camt(shared(name).read_bytes())
    assert parsed.format == kind
    statement = parsed.statements[0]
    assert statement.span()[2] == 1 and statement.bank_ref
    assert all(r.reason is None for r in statement.each())


def test_camt_with_a_doctype_is_refused_unread() -> None:
    data = (
        b'<?xml version="1.0"?><!DOCTYPE d [<!ENTITY x "y">]>'
        b'<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.052.001.02"><BkToCstmrAcctRpt>'
        b"<Rpt><Acct><Id><IBAN>&x;</IBAN></Id></Acct></Rpt></BkToCstmrAcctRpt></Document>"
    )
    with pytest.raises(Unprocessable) as caught:
        read_camt(data)
    assert caught.value.details == {"element": "DOCTYPE"}


def test_camt_entries_read_only_the_elements_of_their_own_namespace() -> None:
    # Each Ntry reads the children of its own namespace, whatever an entry before it read.
    data = (
        b'<Document xmlns="urn:a" xmlns:b="urn:b"><BkToCstmrStmt><Stmt><Acct><Id><IBAN>X1'
        b"</IBAN></Id><Ccy>EUR</Ccy></Acct><Ntry><Amt>1.00</Amt><CdtDbtInd>DBIT</CdtDbtInd>"
        b"<BookgDt><Dt>2026-10-01</Dt></BookgDt><b:AddtlNtryInf>B</b:AddtlNtryInf>"
        b"<AddtlNtryInf>Own A</AddtlNtryInf></Ntry><b:Ntry><b:Amt>2.00</b:Amt>"
        b"<b:CdtDbtInd>CRDT</b:CdtDbtInd><b:BookgDt><b:Dt>2026-10-02</b:Dt></b:BookgDt>"
        b"<AddtlNtryInf>A</AddtlNtryInf><b:AddtlNtryInf>Own B</b:AddtlNtryInf></b:Ntry>"
        b"</Stmt></BkToCstmrStmt></Document>"
    )
    rows = list(read_camt(data).statements[0].each())
    assert [(r.amount_minor, r.description) for r in rows] == [(-100, "Own A"), (200, "Own B")]

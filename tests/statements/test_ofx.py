"""The OFX reader: 1.x SGML and 2.x XML as banks write them, and files written to hurt it."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from domain.errors import Unprocessable
from statements.ofx import converted, read_ofx

SHARED = Path(__file__).resolve().parents[3] / "shared" / "statements"
SGML_HEADER = (
    "OFXHEADER:100\nDATA:OFXSGML\nVERSION:102\nSECURITY:NONE\nENCODING:USASCII\nCHARSET:1252\n"
    "COMPRESSION:NONE\nOLDFILEUID:NONE\nNEWFILEUID:NONE\n\n"
)


def sgml(transactions: str, ledger: str = "100.00", extra: str = "") -> bytes:
    """An OFX 1.02 bank statement (leaves without end tags) around `transactions`."""
    return (
        SGML_HEADER + "<OFX><SIGNONMSGSRSV1><SONRS><STATUS><CODE>0<SEVERITY>INFO</STATUS>"
        "<DTSERVER>20261031<LANGUAGE>ENG<FI><ORG>First Example Bank<FID>1001</FI>"
        "<INTU.BID>1001</SONRS></SIGNONMSGSRSV1><BANKMSGSRSV1><STMTTRNRS><TRNUID>1"
        "<STATUS><CODE>0<SEVERITY>INFO</STATUS><STMTRS><CURDEF>USD<BANKACCTFROM>"
        "<BANKID>1234567890<ACCTID>000123456789<ACCTTYPE>SAVINGS</BANKACCTFROM>"
        f"<BANKTRANLIST><DTSTART>20261001<DTEND>20261031>{transactions}</BANKTRANLIST>"
        f"<LEDGERBAL><BALAMT>{ledger}<DTASOF>20261031</LEDGERBAL>{extra}</STMTRS></STMTTRNRS>"
        "</BANKMSGSRSV1></OFX>"
    ).encode("cp1252")


def trn(amount: str, fitid: str | None = "F1", name: str = "Shop", day: str = "20261005") -> str:
    """One STMTTRN, its leaves without end tags."""
    fit = f"<FITID>{fitid}" if fitid is not None else ""
    posted = f"<DTPOSTED>{day}120000[-5:EST]"
    return f"<STMTTRN><TRNTYPE>DEBIT{posted}<TRNAMT>{amount}{fit}<NAME>{name}</STMTTRN>"


def rows(data: bytes) -> list[tuple[date | None, int | None, str | None, str | None]]:
    parsed = read_ofx(data)
    return [(r.posted_on, r.amount_minor, r.bank_id, r.reason) for r in parsed.statements[0].each()]


def test_an_ofx_1_02_file_with_a_10_digit_bank_id_and_unknown_elements_reads() -> None:
    parsed = read_ofx(sgml(trn("-12.50") + trn("20.00", "F2", "Refund &amp; more"), "7.50"))
    statement = parsed.statements[0]
    assert (statement.bank_ref, statement.kind, statement.currency) == (
        "000123456789", "savings", "USD",
    )  # fmt: skip
    assert (statement.bank_name, statement.last_digits) == ("First Example Bank", "6789")
    assert statement.closing_minor == 750
    merchants = [r.merchant for r in statement.each()]
    assert merchants == ["Shop", "Refund & more"]


def test_transactions_without_fitid_are_imported_and_a_repeated_fitid_is_no_id() -> None:
    found = rows(sgml(trn("-1.00", None) + trn("-2.00", "SAME") + trn("-3.00", "SAME")))
    assert [(amount, bank_id) for _day, amount, bank_id, _why in found] == [
        (-100, None), (-200, None), (-300, None),
    ]  # fmt: skip


def test_unreadable_transactions_are_invalid_rows_naming_the_element() -> None:
    found = rows(sgml(trn("1E+999990") + trn("NaN", "F2") + trn("-1.00", "F3", day="20260231")))
    reasons = [why or "" for *_rest, why in found]
    assert "STMTTRN 1" in reasons[0] and "TRNAMT" in reasons[0] and "not an amount" in reasons[0]
    assert "STMTTRN 2" in reasons[1] and "TRNAMT" in reasons[1]
    assert "DTPOSTED" in reasons[2] and "not a date" in reasons[2]
    assert all("<" not in r and "Decimal" not in r for r in reasons)


def test_a_balance_that_is_no_amount_is_named_and_the_rows_still_import() -> None:
    parsed = read_ofx(sgml(trn("-1.00"), "Infinity"))
    assert parsed.statements[0].closing_minor is None
    assert parsed.not_imported == [
        'the closing balance (LEDGERBAL) of 000123456789: "Infinity" is not an amount'
    ]


def test_xml_ofx_with_cdata_and_comments_reads() -> None:
    data = (
        '<?xml version="1.0" encoding="UTF-8"?><?OFX OFXHEADER="200" VERSION="220"?>\n'
        "<OFX><!-- a comment --><CREDITCARDMSGSRSV1><CCSTMTTRNRS><CCSTMTRS><CURDEF>EUR</CURDEF>"
        "<CCACCTFROM><ACCTID>4111000011112222</ACCTID></CCACCTFROM><BANKTRANLIST>"
        "<STMTTRN>\r\n  <DTPOSTED>20261002</DTPOSTED>\r\n  <TRNAMT>-9.99</TRNAMT>\r\n"
        "  <FITID>X1</FITID>\r\n  <NAME><![CDATA[Café <Ünïcode>]]></NAME>\r\n</STMTTRN>"
        "</BANKTRANLIST>"
        "<LEDGERBAL><BALAMT>-9.99</BALAMT></LEDGERBAL></CCSTMTRS></CCSTMTTRNRS>"
        "</CREDITCARDMSGSRSV1></OFX>"
    ).encode()
    statement = read_ofx(data).statements[0]
    assert statement.kind == "credit_card" and statement.last_digits == "2222"
    assert [r.merchant for r in statement.each()] == ["Café <Ünïcode>"]


def test_any_doctype_is_refused_unread() -> None:
    data = b'<?xml version="1.0"?><!DOCTYPE ofx [<!ENTITY x "y">]><OFX></OFX>'
    with pytest.raises(Unprocessable) as caught:
        read_ofx(data)
    assert caught.value.details == {"element": "DOCTYPE"}


def test_deep_nesting_is_refused_at_a_bound() -> None:
    data = SGML_HEADER.encode() + b"<OFX>" + b"<STMTRS>" * 200_000
    with pytest.raises(Unprocessable, match="nested more than 32 deep"):
        read_ofx(data)


def test_unknown_elements_nested_without_end_are_read_in_one_pass() -> None:
    deep = "<X>" * 200_000
    statement = read_ofx(sgml(trn("-1.00") + deep)).statements[0]
    assert [r.amount_minor for r in statement.each()] == [-100]


def test_an_unclosed_cdata_section_is_422_naming_the_line() -> None:
    data = sgml(trn("-1.00")) + b"<MEMO>" + b"<![CDATA[" * 20_000
    with pytest.raises(Unprocessable, match="CDATA section is not closed"):
        read_ofx(data)


def test_many_cdata_sections_read_in_one_pass() -> None:
    memo = "<MEMO><![CDATA[x]]>" * 10_000
    statement = read_ofx(sgml(trn("-1.00") + memo)).statements[0]
    assert statement.span()[2] == 1


def test_a_file_cut_short_names_the_element_it_ends_in() -> None:
    data = sgml(trn("-1.00"))
    cut = data[: data.index(b"<DTASOF>")]
    with pytest.raises(Unprocessable) as caught:
        read_ofx(cut)
    assert caught.value.details == {"element": "LEDGERBAL"}


def test_a_sign_on_or_error_response_holds_no_transactions() -> None:
    for name, says in [
        ("ofxparse__signon_fail.ofx", "error 15500"),
        ("ofxparse__error_message.ofx", "General Server Error"),
        ("ofxparse__signon_success.ofx", "no bank or card statement"),
    ]:
        if not (SHARED / name).is_file():
            pytest.skip("../shared/statements is missing")
        with pytest.raises(Unprocessable, match=says) as caught:
            read_ofx((SHARED / name).read_bytes())
        assert caught.value.code == "no_transactions"


def test_an_investment_statement_imports_its_cash_and_names_the_rest() -> None:
    path = SHARED / "ofxparse__fidelity.ofx"
    if not path.is_file():
        pytest.skip("../shared/statements is missing")
    parsed = read_ofx(path.read_bytes())
    assert [r.amount_minor for r in parsed.statements[0].each()] == [24, -97, 16]
    assert parsed.not_imported == [
        "investment statement of 01234567890: 14 investment transactions and 6 positions"
    ]
    with pytest.raises(Unprocessable, match="lists none") as caught:
        read_ofx((SHARED / "ofxparse__vanguard.ofx").read_bytes())
    assert "investment statement" in caught.value.details["not_imported"][0]


def test_an_amount_in_another_currency_is_converted_at_its_rate_exactly() -> None:
    assert converted(-365, "USD", "CAD", "1.06") == -387
    assert converted(1000, "USD", "JPY", "151.237") == 1512  # 10.00 USD: 1512.37 -> 1512
    assert converted(250, "EUR", "EUR", "0.5") == 125  # half to even: 1.25 -> 1.25
    with pytest.raises(ValueError, match="not a rate"):
        converted(100, "USD", "EUR", "1e9")


def test_a_transaction_left_open_ends_where_the_next_one_begins() -> None:
    unclosed = "".join(
        trn(amount, f"F{n}").replace("</STMTTRN>", "")
        for n, amount in enumerate(["-1.00", "-2.00", "-3.00"] * 20)
    )
    statement = read_ofx(sgml(unclosed)).statements[0]
    assert statement.span()[2] == 60
    assert sum(r.amount_minor or 0 for r in statement.each()) == -12000


def test_european_amounts_in_ofx_are_read_by_their_last_mark() -> None:
    found = rows(sgml(trn("-1.234,56") + trn("-12,50", "F2") + trn("-1,234.56", "F3")))
    assert [amount for _day, amount, _id, _why in found] == [-123456, -1250, -123456]

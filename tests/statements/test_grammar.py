"""The one amount grammar and the date reader: what is an amount or a date, and what is not."""

from __future__ import annotations

from datetime import date

import pytest

from statements.amounts import COMMA, POINT, NumberStyle
from statements.dates import DateStyle, guess_order
from statements.read import ReadOptions, read_statement


@pytest.mark.parametrize(
    "text, minor, named",
    [
        ("100.00 DR", -10000, None),
        ("100.00DR", -10000, None),
        ("5 CR", 500, None),
        ("12.00-", -1200, None),
        ("(1,234.56)", -123456, None),
        ("£12.00", 1200, "GBP"),
        ("-$1,234.56", -123456, None),
        ("USD 5", 500, "USD"),
        ("12.50 EUR", 1250, "EUR"),
        ("€ -12.00", -1200, "EUR"),
        ("\u221212.00", -1200, None),
        ("+00000000000000.2400", 24, None),
        ("999999999999999.99", 99999999999999999, None),
        (".50", 50, None),
    ],
)
def test_what_the_grammar_reads(text: str, minor: int, named: str | None) -> None:
    found = POINT.read(text, "USD")
    assert (found.minor, found.currency) == (minor, named)


@pytest.mark.parametrize(
    "text, why",
    [
        ("1e3", "not an amount"),
        ("12abc34", "not an amount"),
        ("1E+999990", "not an amount"),
        ("NaN", "not an amount"),
        ("Infinity", "not an amount"),
        ("INF", "not an amount"),
        ("1234567890123456.00", "more than 15 digits"),
        ("12.345", "more decimals than USD"),
        ("-12.00 DR", "more than one sign"),
        ("(-5)", "more than one sign"),
        ("1,2,3", "not an amount"),
        ("9" * 80, "too long"),
    ],
)
def test_what_is_no_amount_says_why_without_a_repr(text: str, why: str) -> None:
    with pytest.raises(ValueError, match=why) as caught:
        POINT.read(text, "USD")
    assert "'" not in str(caught.value) and "Decimal" not in str(caught.value)


def test_the_locale_groups_and_decimals_are_the_files() -> None:
    assert COMMA.read("-1.234,56", "EUR").minor == -123456
    assert COMMA.read("380115,", "EUR").minor == 38011500
    with pytest.raises(ValueError):
        COMMA.read("1,234.56", "EUR")
    assert NumberStyle(",", "\u202f").read("1 234,56", "EUR").minor == 123456
    assert POINT.read("5442.09000", "EUR").minor == 544209  # extra zero decimals are fine
    assert POINT.read("7", "JPY").minor == 7


def test_extra_decimals_are_rounded_half_to_even_where_asked() -> None:
    assert POINT.read("+00000000000115.8331", "USD", rounded=True).minor == 11583
    assert POINT.read("-197.1063", "USD", rounded=True).minor == -19711
    assert POINT.read("0.125", "USD", rounded=True).minor == 12
    assert POINT.read("0.135", "USD", rounded=True).minor == 14


@pytest.mark.parametrize(
    "order, text, day",
    [
        ("dmy", "01 Oct 2026", date(2026, 10, 1)),
        ("dmy", "1. Oktober 2026", date(2026, 10, 1)),
        ("mdy", "Oct 1, 2026", date(2026, 10, 1)),
        ("dmy", "03 Mär 2026", date(2026, 3, 3)),
        ("dmy", "12 mei 2026", date(2026, 5, 12)),
        ("dmy", "01-févr.-26", date(2026, 2, 1)),
        ("ymd", "2026-10-01 10:11:12", date(2026, 10, 1)),
        ("dmy", "2026-10-01T10:11:12Z", date(2026, 10, 1)),
        ("mdy", "10/01/2026 12:00 PM", date(2026, 10, 1)),
        ("dmy", "20261001", date(2026, 10, 1)),
        ("dmy", "1.3.2026", date(2026, 3, 1)),
        ("mdy", "1/ 1/01", date(2001, 1, 1)),
    ],
)
def test_dates_as_banks_write_them(order: str, text: str, day: date) -> None:
    assert DateStyle(order).parse(text) == day


@pytest.mark.parametrize("text", ["31.02.2026", "soon", "2026", "13/13/2026", "x" * 100])
def test_what_is_no_date(text: str) -> None:
    with pytest.raises(ValueError, match="is not a date"):
        DateStyle("dmy").parse(text)


def test_the_order_is_guessed_from_the_values() -> None:
    assert guess_order(["01/02/2026", "25/02/2026"]) == "dmy"
    assert guess_order(["02/25/2026"]) == "mdy"
    assert guess_order(["01/02/2026"]) is None


def test_utf16_without_a_mark_and_nul_padding_are_text() -> None:
    csv = "Date,Payee,Amount\n2026-10-01,Café,-1.50\n"
    for data in (csv.encode("utf-16-le"), csv.encode("utf-16-be"), csv.encode() + b"\x00" * 64):
        parsed = read_statement(data, "x.csv", ReadOptions(currency="EUR"))
        rows = list(parsed.statements[0].each())
        assert [(r.merchant, r.amount_minor) for r in rows] == [("Café", -150)]

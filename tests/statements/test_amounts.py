"""Amounts and dates as locales write them, read exactly."""

from __future__ import annotations

from datetime import date

import pytest

from domain.errors import Unprocessable
from statements.amounts import NumberStyle
from statements.dates import DateStyle


@pytest.mark.parametrize(
    "locale, text, currency, minor",
    [
        ("de_DE", "1.234,56", "EUR", 123456),
        ("de_DE", "-1.234,56 €", "EUR", -123456),
        ("de_DE", "12,00-", "EUR", -1200),
        ("en_US", "(1,234.56)", "USD", -123456),
        ("en_US", "+5", "USD", 500),
        ("fr_FR", "1\u202f234,56", "EUR", 123456),
        ("de_CH", "1\u2019234.50", "CHF", 123450),
        ("ja_JP", "1,234", "JPY", 1234),
    ],
)
def test_amounts_read_as_the_locale_writes_them(
    locale: str, text: str, currency: str, minor: int
) -> None:
    assert NumberStyle.of(locale).parse(text, currency) == minor


@pytest.mark.parametrize("text", ["", "abc", "1,2,3", "12.345", "--1"])
def test_what_is_no_amount_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        NumberStyle.of("en_US").parse(text, "USD")


def _minor_or_error(read: object) -> object:
    try:
        return read() if callable(read) else read
    except ValueError as err:
        return ("ValueError", str(err))


def test_minor_is_what_read_says_for_every_text_and_currency() -> None:
    # The usual case is read without an Amount; anything else, and every error, as read does.
    texts = ["12.34", "-12.34", "+5", "0012.3", "12.", ".5", "12.345", "12.3456", "1e3", ""]
    texts += ["-0.00", "1234567890123456", "12,34", "1.234,56", "\u0661\u0662.\u0663", "5-"]
    texts += ["12.5", "-7", "999999999999999.99", " 1.00", "1.00 "]
    styles = (NumberStyle(".", ","), NumberStyle(",", "."), NumberStyle.of("de_CH"))
    for style in styles:
        for currency in ("EUR", "JPY", "BHD", "eur", "XYZ", None, "JPY", None):
            for text in texts:
                for rounded in (False, True):
                    fast = _minor_or_error(
                        lambda: style.minor(text, currency, rounded=rounded)  # noqa: B023
                    )
                    slow = _minor_or_error(
                        lambda: style.read(text, currency, rounded=rounded).minor  # noqa: B023
                    )
                    assert fast == slow, (style.decimal, currency, text, rounded)
    assert NumberStyle(".", ",").minor("12.3", "JPY", rounded=True) == 12
    assert NumberStyle(".", ",").minor("-12.3", "BHD") == -12300


def test_the_style_is_guessed_from_the_values() -> None:
    assert NumberStyle.guess(["1.234,56", "-3,20"]).decimal == ","  # type: ignore[union-attr]
    assert NumberStyle.guess(["1,234.56", "-3.20"]).decimal == "."  # type: ignore[union-attr]
    assert NumberStyle.guess(["12", "7"]) is None


def test_thousands_grouped_by_spaces_are_guessed_with_a_decimal_comma() -> None:
    style = NumberStyle.guess(["-1 250,00", "3,20"])
    assert style is not None
    assert [style.parse(v, "CZK") for v in ("-1 250,00", "3,20", "12 345 678,9")] == [
        -125000,
        320,
        1234567890,
    ]
    dotted = NumberStyle.guess(["1.250,00", "3 200,00"])  # dots group: spaces are not read
    assert dotted is not None and dotted.parse("1.250,00", "EUR") == 125000


@pytest.mark.parametrize(
    "locale, text, day",
    [
        ("de_DE", "12.03.26", date(2026, 3, 12)),
        ("en_US", "12/03/2026", date(2026, 12, 3)),
        ("en_GB", "12/03/2026", date(2026, 3, 12)),
        ("en_US", "2026-03-12", date(2026, 3, 12)),
        ("de_DE", "20260312", date(2026, 3, 12)),
    ],
)
def test_dates_read_in_the_locales_order(locale: str, text: str, day: date) -> None:
    assert DateStyle.of(locale).parse(text) == day


def test_impossible_dates_are_refused() -> None:
    with pytest.raises(ValueError, match="not a date"):
        DateStyle.of("de_DE").parse("31.02.2026")


def test_an_unknown_locale_is_422_naming_it() -> None:
    with pytest.raises(Unprocessable) as caught:
        NumberStyle.of("xx_YY")
    assert caught.value.details == {"locale": ['Unknown locale "xx_YY".']}

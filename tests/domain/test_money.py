"""The one money bound: 15 digits before the decimal mark, and never past 64 bits."""

from __future__ import annotations

from domain.money import MAX_INTEGER_DIGITS, within_bound


def test_fifteen_digits_before_the_decimal_mark_and_no_more() -> None:
    assert MAX_INTEGER_DIGITS == 15
    assert within_bound(999_999_999_999_999_99, "EUR")
    assert within_bound(-999_999_999_999_999_99, "EUR")
    assert not within_bound(1_000_000_000_000_000_00, "EUR")
    assert within_bound(999_999_999_999_999, "JPY")  # no decimals
    assert not within_bound(1_000_000_000_000_000, "JPY")
    assert within_bound(999_999_999_999_999_999, "KWD")  # three decimals


def test_four_decimal_currencies_are_held_to_64_bits() -> None:
    assert within_bound(2**63 - 1, "CLF")
    assert not within_bound(2**63, "CLF")

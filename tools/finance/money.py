"""Money as integer minor units: the one place that knows each currency's decimals."""

from __future__ import annotations

from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_UP, Decimal

DEFAULT_MINOR_UNITS = 2
# ISO 4217 currencies whose minor unit is not 1/100.
MINOR_UNITS: dict[str, int] = {
    "BHD": 3,
    "CLP": 0,
    "ISK": 0,
    "JOD": 3,
    "JPY": 0,
    "KRW": 0,
    "KWD": 3,
    "OMR": 3,
    "TND": 3,
    "VND": 0,
}


def minor_units(currency: str) -> int:
    """Return how many decimals `currency` has (2 unless listed otherwise)."""
    return MINOR_UNITS.get(currency.upper(), DEFAULT_MINOR_UNITS)


def to_decimal(amount_minor: int, currency: str) -> Decimal:
    """Return `amount_minor` as an exact Decimal in major units."""
    return Decimal(amount_minor).scaleb(-minor_units(currency))


def format_minor(amount_minor: int, currency: str) -> str:
    """Return e.g. "-42.50" for -4250 EUR: a decimal string in major units."""
    places = minor_units(currency)
    return f"{to_decimal(amount_minor, currency):.{places}f}"


def lower_bound_minor(amount: Decimal, units: int) -> int:
    """Return the smallest minor amount (with `units` decimals) that is >= `amount`."""
    return _scale(amount, units, ROUND_CEILING)


def upper_bound_minor(amount: Decimal, units: int) -> int:
    """Return the largest minor amount (with `units` decimals) that is <= `amount`."""
    return _scale(amount, units, ROUND_FLOOR)


def _scale(amount: Decimal, units: int, rounding: str) -> int:
    return int(amount.scaleb(units).quantize(Decimal(1), rounding=rounding))


def percent(part: int, whole: int) -> str | None:
    """Return 100 * part / whole with one decimal, or None when `whole` is 0."""
    if whole == 0:
        return None
    value = Decimal(part) * 100 / Decimal(whole)
    return str(value.quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))

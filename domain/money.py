"""Money as integer minor units: the one place that knows each currency's decimals."""

from __future__ import annotations

from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_UP, Decimal

from domain.currencies import MINOR_UNITS

# A code ISO 4217 does not list (a bank's own, or a new one) is taken to have 2 decimals.
DEFAULT_MINOR_UNITS = 2
# The codes whose minor unit is not the default: all a query needs to convert per currency.
OTHER_MINOR_UNITS: dict[str, int] = {
    code: units for code, units in MINOR_UNITS.items() if units != DEFAULT_MINOR_UNITS
}


# The most digits before the decimal mark any amount, balance or sum may have: a row's amount
# (statements/amounts.py) and an account's balance alike. With up to 3 decimals that stays
# within a signed 64-bit integer (the databases' BIGINT); the few 4-decimal currencies are held
# to 64 bits as well.
MAX_INTEGER_DIGITS = 15
_INT64 = 2**63


def within_bound(amount_minor: int, currency: str) -> bool:
    """Whether `amount_minor` has at most MAX_INTEGER_DIGITS digits before the decimal mark
    (and fits a signed 64-bit integer)."""
    limit: int = min(10 ** (MAX_INTEGER_DIGITS + minor_units(currency)), _INT64)
    return abs(amount_minor) < limit


def minor_units(currency: str) -> int:
    """Return how many decimals `currency` has in ISO 4217 (2 for a code it does not list)."""
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

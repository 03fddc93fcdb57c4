"""The one amount grammar every statement format is read with, exactly, in integer minor units.

An amount is: an optional sign (`-`, `+`, U+2212), parentheses, a trailing `-`, `DR` or `CR`
(one of them at most); an optional currency code (ISO 4217) or symbol before or after it;
digits with the style's group marks (`1.234.567`) and decimal mark; at most 15 digits before
the decimal mark. Anything else (`1e3`, `12abc34`, `NaN`, `Infinity`, `1E+999990`) is no
amount: ValueError saying why, which a reader turns into an invalid row. No Decimal is ever
built from the text: the digits become an integer directly, so no exponent can cost anything.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from babel import Locale, UnknownLocaleError
from babel.numbers import get_decimal_symbol, get_group_symbol

from domain.currencies import MINOR_UNITS
from domain.errors import Unprocessable
from domain.money import MAX_INTEGER_DIGITS, minor_units

DEFAULT_LOCALE = "en_US"
# Digits allowed before the decimal mark (leading zeros aside): MAX_INTEGER_DIGITS of
# domain/money.py, 999 trillion. Longer text is refused unread.
MAX_AMOUNT_CHARS = 64
# Symbols that name one currency; `$`, `¥` and `kr` name several, so they name none.
SYMBOLS: dict[str, str | None] = {
    "€": "EUR", "£": "GBP", "₹": "INR", "₽": "RUB", "₩": "KRW", "₪": "ILS", "₺": "TRY",
    "₫": "VND", "฿": "THB", "₴": "UAH", "₦": "NGN", "₱": "PHP", "zł": "PLN", "Kč": "CZK",
    "Ft": "HUF", "R$": "BRL", "US$": "USD", "C$": "CAD", "CA$": "CAD", "A$": "AUD",
    "AU$": "AUD", "NZ$": "NZD", "HK$": "HKD", "S$": "SGD", "Fr.": "CHF", "$": None, "¥": None,
    "kr": None, "kr.": None,
}  # fmt: skip
_SYMBOL = "|".join(re.escape(s) for s in sorted(SYMBOLS, key=len, reverse=True))
_LEAD_CURRENCY = re.compile(rf"^(?:(?P<code>[A-Z]{{3}})(?![A-Za-z])|(?P<symbol>{_SYMBOL}))\s*")
_TRAIL_CURRENCY = re.compile(rf"\s*(?:(?<![A-Za-z])(?P<code>[A-Z]{{3}})|(?P<symbol>{_SYMBOL}))$")
_INDICATOR = re.compile(r"\s*(?P<mark>[DdCc][Rr])\.?$")
_MINUSES = str.maketrans({"\u2212": "-", "\u2012": "-", "\u2013": "-", "\ufe63": "-"})
_SPACES = " \u00a0\u202f\u2009\u2007"
QUOTE_CHARS = 40
# Currencies a NumberStyle remembers the decimals of.
UNITS_KEPT = 64


def quoted(text: str) -> str:
    """`text` as a message shows it: in double quotes, shortened, control characters as `?`."""
    short = text if len(text) <= QUOTE_CHARS else text[:QUOTE_CHARS] + "..."
    return '"' + "".join(c if c.isprintable() else "?" for c in short) + '"'


@dataclass(frozen=True, slots=True)
class Amount:
    """An amount read: minor units, and the currency its text names (None if it names none)."""

    minor: int
    currency: str | None


_SPACE_GROUPED = re.compile(rf"\d[{_SPACES}]\d{{3}}(?!\d)")


class NumberStyle:
    """How a file writes a decimal number: its decimal mark and its grouping mark."""

    __slots__ = ("_grouped", "_plain", "_simple", "_units", "decimal", "group")

    def __init__(self, decimal: str, group: str) -> None:
        self.decimal, self.group = decimal, group
        point = re.escape(decimal)
        if group.strip(_SPACES) == "":
            marks = f"[{_SPACES}]"
        elif group in "'\u2019":
            marks = "['\u2019]"
        else:
            marks = re.escape(group)
        self._plain = re.compile(rf"(\d+)(?:{point}(\d*))?|{point}(\d+)")
        # The usual case, read without the general path: -1234.56
        self._simple = re.compile(
            rf"([-+]?)0*(\d{{1,{MAX_INTEGER_DIGITS}}})(?:{point}(\d{{1,3}}))?"
        )
        self._grouped = re.compile(rf"(\d{{1,3}}(?:{marks}\d{{3}})+)(?:{point}(\d*))?")
        # Decimals of the currencies `minor` was asked about (None: EUR's), at most UNITS_KEPT.
        self._units: dict[str | None, int] = {}

    @classmethod
    def of(cls, locale: str) -> NumberStyle:
        """The style of `locale` (babel's CLDR data)."""
        found = load_locale(locale)
        return cls(get_decimal_symbol(found), get_group_symbol(found))

    @classmethod
    def guess(cls, samples: list[str]) -> NumberStyle | None:
        """The style most `samples` are written in, when they say (`1.234,56` or `1,234.56`)."""
        comma = dot = spaced = 0
        for text in samples:
            cleaned = re.sub(r"[^\d.,]", "", text[:MAX_AMOUNT_CHARS])
            if re.search(r",\d{1,2}$", cleaned) or re.search(r"\.\d{3}(\.\d{3})*,", cleaned):
                comma += 1
                spaced += bool(_SPACE_GROUPED.search(text[:MAX_AMOUNT_CHARS]))
            elif re.search(r"\.\d{1,2}$", cleaned) or re.search(r",\d{3}(,\d{3})*\.", cleaned):
                dot += 1
        if comma > dot:
            # `1 250,00` (Czech, French, Nordic banks): a space groups the thousands.
            return cls(",", " " if spaced and "." not in "".join(samples) else ".")
        if dot > comma:
            return cls(".", ",")
        return None

    def parse(self, text: str, currency: str) -> int:
        """`text` in minor units of `currency`: `-1.234,56 €`, `(12.00)`, `12.00-`, `5 CR`."""
        return self.minor(text, currency)

    def minor(self, text: str, currency: str | None, *, rounded: bool = False) -> int:
        """`read(text, currency, rounded=rounded).minor`: the usual case (`-1234.56`, no more
        decimals than the currency has) read without building an Amount, else `read`."""
        simple = self._simple.fullmatch(text)
        if simple is not None:
            sign, whole, fraction = simple.groups()
            units = self._units.get(currency)
            if units is None:
                units = minor_units(currency or "EUR")
                if len(self._units) < UNITS_KEPT:
                    self._units[currency] = units
            if fraction is None:
                minor = int(whole) * 10**units
            elif len(fraction) <= units:
                minor = int(whole + fraction.ljust(units, "0"))
            else:
                return self.read(text, currency, rounded=rounded).minor
            return -minor if sign == "-" else minor
        return self.read(text, currency, rounded=rounded).minor

    def read(self, text: str, currency: str | None, *, rounded: bool = False) -> Amount:
        """`text` read by the grammar; its decimals are those of the currency it names, else
        of `currency` (more are refused, or with `rounded` rounded half to even: a brokerage's
        OFX writes 4). ValueError saying why when it is no amount."""
        simple = self._simple.fullmatch(text)
        if simple is not None:
            sign, whole, fraction = simple.groups()
            units = minor_units(currency or "EUR")
            if fraction is None or len(fraction) <= units:
                cents = int(fraction.ljust(units, "0")) if fraction and units else 0
                minor = int(whole) * 10**units + cents
                return Amount(-minor if sign == "-" else minor, None)
        if len(text) > MAX_AMOUNT_CHARS:
            raise ValueError(f"{quoted(text)} is too long to be an amount")
        body, negative, named = _strip_marks(text.strip().translate(_MINUSES), text)
        units = minor_units(named or currency or "EUR")
        whole, fraction = self._digits(body, text)
        if len(whole) > MAX_INTEGER_DIGITS:
            raise ValueError(
                f"{quoted(text)} has more than {MAX_INTEGER_DIGITS} digits before the decimal mark"
            )
        if len(fraction) > units and fraction[units:].strip("0"):
            if not rounded:
                raise ValueError(f"{quoted(text)} has more decimals than {named or currency} has")
            exact = Fraction(int((whole or "0") + fraction), 10 ** (len(fraction) - units))
            minor = round(exact)
        else:
            kept = fraction[:units].ljust(units, "0")
            minor = int(whole or "0") * 10**units + int(kept or "0")
        return Amount(-minor if negative else minor, named)

    def _digits(self, body: str, text: str) -> tuple[str, str]:
        """The digits before and after the decimal mark, leading zeros dropped."""
        found = self._plain.fullmatch(body)
        if found is not None:
            if found.group(3) is not None:
                return "", found.group(3)
            return found.group(1).lstrip("0"), found.group(2) or ""
        found = self._grouped.fullmatch(body)
        if found is None:
            raise ValueError(f"{quoted(text)} is not an amount")
        whole = re.sub(r"\D", "", found.group(1)).lstrip("0")
        return whole, found.group(2) or ""


def _strip_marks(body: str, text: str) -> tuple[str, bool, str | None]:
    """Take the sign, indicator and currency off `body`: (digits part, negative, currency)."""
    signs: list[bool] = []  # each mark found: True for one that says negative
    named: str | None = None
    indicator = _INDICATOR.search(body)
    if indicator is not None and indicator.start() > 0:
        signs.append(indicator.group("mark").upper() == "DR")
        body = body[: indicator.start()]
    if body.startswith("(") and body.endswith(")"):
        signs.append(True)
        body = body[1:-1].strip()
    for _ in range(2):  # a sign may stand before or after the currency: -€5, €-5
        if body[:1] in "+-" and body:
            signs.append(body[0] == "-")
            body = body[1:].lstrip(_SPACES)
        found = _LEAD_CURRENCY.match(body)
        if found is not None and named is None and _is_currency(found):
            named, body = _currency_of(found), body[found.end() :]
    for _ in range(2):  # 5-, 5 EUR-, 5- EUR
        if body.endswith("-"):
            signs.append(True)
            body = body[:-1].rstrip(_SPACES)
        found = _TRAIL_CURRENCY.search(body)
        if found is not None and named is None and _is_currency(found) and found.start() > 0:
            named, body = _currency_of(found), body[: found.start()]
    if len(signs) > 1:
        raise ValueError(f"{quoted(text)} has more than one sign")
    return body.strip(_SPACES), bool(signs and signs[0]), named


def _is_currency(found: re.Match[str]) -> bool:
    return found.group("symbol") is not None or found.group("code") in MINOR_UNITS


def _currency_of(found: re.Match[str]) -> str | None:
    if found.group("code") is not None:
        return found.group("code")
    return SYMBOLS[found.group("symbol")]


@lru_cache(maxsize=64)
def load_locale(name: str) -> Locale:
    """The babel Locale called `name` (`de_DE`, `de-DE`), or 422 naming the field."""
    try:
        return Locale.parse(name.replace("-", "_"))
    except (UnknownLocaleError, ValueError, TypeError) as err:
        raise Unprocessable(f"Unknown locale {quoted(name)}.", field="locale") from err


# The machine formats' styles: OFX and CAMT write `1234.56`, MT940 writes `1234,56`.
POINT = NumberStyle(".", ",")
COMMA = NumberStyle(",", ".")

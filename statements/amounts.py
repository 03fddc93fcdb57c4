"""Amounts and dates written as a locale writes them (`1.234,56`, `12/03/2026`), read exactly."""

from __future__ import annotations

import re
from datetime import date
from decimal import Decimal, InvalidOperation

from babel import Locale, UnknownLocaleError
from babel.dates import get_date_format
from babel.numbers import get_decimal_symbol, get_group_symbol

from domain.errors import Unprocessable
from domain.money import minor_units

DEFAULT_LOCALE = "en_US"
_DIGIT_GROUPS = re.compile(r"\d+")
_NOT_NUMBER = re.compile(r"[^\d.,'\u00a0\u202f +\-()]")
_SPACES = re.compile(r"[\s\u00a0\u202f']")


class NumberStyle:
    """How one locale writes a decimal number: its decimal and grouping symbols."""

    __slots__ = ("decimal", "group")

    def __init__(self, decimal: str, group: str) -> None:
        self.decimal, self.group = decimal, group

    @classmethod
    def of(cls, locale: str) -> NumberStyle:
        """The style of `locale` (babel's CLDR data)."""
        found = load_locale(locale)
        return cls(get_decimal_symbol(found), get_group_symbol(found))

    @classmethod
    def guess(cls, samples: list[str]) -> NumberStyle | None:
        """The style most `samples` are written in, when they say (`1.234,56` or `1,234.56`)."""
        comma = dot = 0
        for text in samples:
            cleaned = _SPACES.sub("", _NOT_NUMBER.sub("", text))
            if re.search(r",\d{1,2}\)?-?$", cleaned):
                comma += 1
            elif re.search(r"\.\d{1,2}\)?-?$", cleaned):
                dot += 1
        if comma > dot:
            return cls(",", ".")
        if dot > comma:
            return cls(".", ",")
        return None

    def parse(self, text: str, currency: str) -> int:
        """`text` in minor units of `currency`: `-1.234,56 €`, `(12.00)`, `12.00-` and `+5`."""
        cleaned = _SPACES.sub("", _NOT_NUMBER.sub("", text))
        negative = False
        if cleaned.startswith("(") and cleaned.endswith(")"):
            negative, cleaned = True, cleaned[1:-1]
        if cleaned.endswith("-"):
            negative, cleaned = True, cleaned[:-1]
        if cleaned.startswith(("-", "+")):
            negative, cleaned = negative or cleaned[0] == "-", cleaned[1:]
        whole = cleaned.partition(self.decimal)[0]
        if self.group.strip() and self.group in whole:
            if not re.fullmatch(rf"\d{{1,3}}({re.escape(self.group)}\d{{3}})+", whole):
                raise ValueError(f"{text!r} is not an amount (digits grouped wrongly)")
            cleaned = cleaned.replace(self.group, "")
        cleaned = cleaned.replace(self.decimal, ".")
        if not cleaned or not re.fullmatch(r"\d+(\.\d+)?", cleaned):
            raise ValueError(f"{text!r} is not an amount")
        try:
            value = Decimal(cleaned)
        except InvalidOperation as err:
            raise ValueError(f"{text!r} is not an amount") from err
        scaled = value.scaleb(minor_units(currency))
        if scaled != scaled.to_integral_value():
            raise ValueError(f"{text!r} has more decimals than {currency} has")
        minor = int(scaled)
        return -minor if negative else minor


class DateStyle:
    """The order a locale writes day, month and year in; ISO dates are always read."""

    __slots__ = ("order",)

    def __init__(self, order: str) -> None:
        self.order = order

    @classmethod
    def of(cls, locale: str) -> DateStyle:
        """The order of `locale`'s short date format (`dd.MM.yy` is dmy, `M/d/yy` mdy)."""
        pattern = get_date_format("short", locale=load_locale(locale)).pattern
        positions = {key: pattern.find(key) for key in ("d", "M", "y")}
        return cls("".join(sorted(positions, key=positions.__getitem__)).lower())

    def parse(self, text: str) -> date:
        """The date `text` means in this order (or ISO `2026-03-12`); 2-digit years are 20xx."""
        parts = _DIGIT_GROUPS.findall(text)
        if len(parts) == 1 and len(parts[0]) == 8:
            whole = parts[0]
            parts = [whole[:4], whole[4:6], whole[6:]]
        if len(parts) != 3:
            raise ValueError(f"{text!r} is not a date")
        if len(parts[0]) == 4:
            year, month, day = (int(p) for p in parts)
        else:
            named = dict(zip(self.order, (int(p) for p in parts), strict=True))
            year, month, day = named["y"], named["m"], named["d"]
            if year < 100:
                year += 2000
        try:
            return date(year, month, day)
        except ValueError as err:
            raise ValueError(f"{text!r} is not a date ({err})") from err


def load_locale(name: str) -> Locale:
    """The babel Locale called `name` (`de_DE`, `de-DE`), or 422 naming the field."""
    try:
        return Locale.parse(name.replace("-", "_"))
    except (UnknownLocaleError, ValueError, TypeError) as err:
        raise Unprocessable(f"Unknown locale {name!r}.", field="locale") from err

"""Dates as banks write them: `12.03.26`, `03/12/2026`, `2026-03-12T10:00:00`, `01 Oct 2026`,
`1. Oktober 2026`, `Oct 1, 2026`, `20260312`; month names in the file's language (babel)."""

from __future__ import annotations

import re
import unicodedata
from datetime import date
from functools import lru_cache

from babel.dates import get_date_format, get_month_names

from statements.amounts import load_locale, quoted

# Languages whose month names are read in any file (a locale's own are read first).
LANGUAGES = ("en", "de", "fr", "es", "it", "nl", "pt", "pl", "sv", "da", "nb")
# Longer text is refused unread.
MAX_DATE_CHARS = 64
_TOKENS = re.compile(r"\d+|[^\W\d_]+")
# Three numbers, and nothing after them but a time: 01.10.2026, 2026-10-01T10:00:00.
_NUMERIC = re.compile(r"\s*(\d{1,4})[./-](\d{1,2})[./-](\d{1,4})(?=$|[\sT])")


def _fold(word: str) -> str:
    """A month name as the table keys it: lower case, no accents, no dot."""
    plain = unicodedata.normalize("NFKD", word.casefold())
    return "".join(c for c in plain if c.isalpha() and not unicodedata.combining(c))


@lru_cache(maxsize=32)
def month_names(language: str | None) -> dict[str, int]:
    """Month name (wide, abbreviated, folded) to number: `language`'s first, then the names of
    LANGUAGES that mean one month only."""
    found: dict[str, set[int]] = {}
    for lang in LANGUAGES:
        for name, month in _names(lang):
            found.setdefault(name, set()).add(month)
    table = {name: next(iter(months)) for name, months in found.items() if len(months) == 1}
    if language:
        table.update(_names(language))
    return table


def _names(language: str) -> list[tuple[str, int]]:
    locale = load_locale(language)
    pairs: list[tuple[str, int]] = []
    for context in ("format", "stand-alone"):
        for width in ("wide", "abbreviated"):
            for month, name in get_month_names(width, context, locale).items():
                folded = _fold(name)
                if len(folded) >= 3:
                    pairs.append((folded, month))
                    pairs.append((folded[:3], month))
                    if len(folded) >= 4:
                        pairs.append((folded[:4], month))
    return [(name, month) for name, month in pairs if name]


class DateStyle:
    """The order a file writes day, month and year in (dmy, mdy, ymd), and its language."""

    __slots__ = ("language", "months", "order")

    def __init__(self, order: str, language: str | None = None) -> None:
        self.order, self.language = order, language
        self.months = month_names(language)

    @classmethod
    def of(cls, locale: str) -> DateStyle:
        """The order of `locale`'s short date format (`dd.MM.yy` is dmy, `M/d/yy` mdy)."""
        found = load_locale(locale)
        pattern = get_date_format("short", locale=found).pattern
        positions = {key: pattern.find(key) for key in ("d", "M", "y")}
        order = "".join(sorted(positions, key=positions.__getitem__)).lower()
        return cls(order, found.language)

    def parse(self, text: str) -> date:
        """The date `text` means (a time after it is ignored); 2-digit years are 1970-2069."""
        if len(text) > MAX_DATE_CHARS:
            raise ValueError(f"{quoted(text)} is not a date")
        numeric = _NUMERIC.match(text)
        if numeric is not None:  # the usual case, read without the general path: 01.10.2026
            first, second, third = numeric.groups()
            return self._ordered(text, [int(first), int(second), int(third)], -1, [first])
        parts: list[int] = []
        month_at = -1
        for token in _TOKENS.findall(text):
            if len(parts) == 3:
                break
            if token.isdigit():
                if len(token) == 8 and not parts:
                    return _checked(text, int(token[:4]), int(token[4:6]), int(token[6:]))
                if len(token) > 4:
                    raise ValueError(f"{quoted(text)} is not a date")
                parts.append(int(token))
            elif month_at < 0 and _fold(token) in self.months:
                month_at = len(parts)
                parts.append(self.months[_fold(token)])
            elif parts:
                raise ValueError(f"{quoted(text)} is not a date")
        if len(parts) != 3:
            raise ValueError(f"{quoted(text)} is not a date")
        return self._ordered(text, parts, month_at, _TOKENS.findall(text))

    def _ordered(self, text: str, parts: list[int], month_at: int, tokens: list[str]) -> date:
        first = tokens[0]
        if month_at == 0:  # Oct 1, 2026
            return _checked(text, _year(parts[2]), parts[0], parts[1])
        if month_at == 1:  # 01 Oct 2026, or 2026 Oct 01
            if len(first) == 4:
                return _checked(text, parts[0], parts[1], parts[2])
            return _checked(text, _year(parts[2]), parts[1], parts[0])
        if month_at == 2:  # 2026 01 Oct: not a way anyone writes a date
            raise ValueError(f"{quoted(text)} is not a date")
        if len(first) == 4 or self.order == "ymd":
            return _checked(text, _year(parts[0]), parts[1], parts[2])
        if self.order == "mdy":
            return _checked(text, _year(parts[2]), parts[0], parts[1])
        return _checked(text, _year(parts[2]), parts[1], parts[0])


def guess_order(samples: list[str]) -> str | None:
    """dmy or mdy when a sample says (a first or second number over 12), else None."""
    for text in samples:
        numbers = re.findall(r"\d+", text[:MAX_DATE_CHARS])
        if len(numbers) >= 3 and len(numbers[0]) <= 2 and len(numbers[1]) <= 2:
            if int(numbers[0]) > 12:
                return "dmy"
            if int(numbers[1]) > 12:
                return "mdy"
    return None


def _year(value: int) -> int:
    if value >= 100:
        return value
    return 2000 + value if value < 70 else 1900 + value


def _checked(text: str, year: int, month: int, day: int) -> date:
    try:
        return date(year, month, day)
    except ValueError as err:
        raise ValueError(f"{quoted(text)} is not a date ({err})") from err

"""Days ahead named in questions: "on 15 January", "by the end of next month", "in 3 weeks"."""

from __future__ import annotations

import re
from datetime import date, timedelta

from demo_model.periods import MONTH_NAMES, MONTHS, NUMBERS

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_DAY = r"(?P<d>[0-3]?\d)(?:st|nd|rd|th)?"
_MONTH = r"(?P<m>" + MONTH_NAMES + r")\b\.?"
_YEAR = r"(?:,?\s*(?P<y>20\d{2}))?"
DAY_MONTH = re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}{_YEAR}")
MONTH_DAY = re.compile(rf"\b{_MONTH}\s+{_DAY}\b{_YEAR}")
ISO = re.compile(r"\b(?P<y>20\d{2})-(?P<m>\d{2})-(?P<d>\d{2})\b")
IN_SOME = re.compile(
    r"\bin (?P<n>\d{1,3}|" + "|".join(NUMBERS) + r") (?P<u>day|week|month|year)s?\b"
)
END_OF = re.compile(
    r"\b(?:the )?end of (?:the |this )?(?P<w>month|year|next month|next year|"
    + MONTH_NAMES
    + r")\b"
)


def future_day(text: str, today: date) -> tuple[date, str] | None:
    """Return the day ahead a question names, and how to say it, or None if it names none.

    A day of the year already past is next year's ("15 January" asked in September).
    """
    q = text.lower()
    for pattern in (ISO, DAY_MONTH, MONTH_DAY):
        if found := pattern.search(q):
            day = _dated(found, today)
            if day is not None:
                return day, day.isoformat()
    if found := END_OF.search(q):
        return _end_of(found["w"], today)
    if found := IN_SOME.search(q):
        count = NUMBERS.get(found["n"]) or int(found["n"])
        return _after(today, count, found["u"]), f"in {count} {found['u']}s"
    return _named(q, today)


def _dated(found: re.Match[str], today: date) -> date | None:
    month = found["m"]
    number = int(month) if month.isdigit() else MONTHS[month]
    try:
        day = date(int(found["y"]) if found["y"] else today.year, number, int(found["d"]))
    except ValueError:
        return None
    if day < today and not found["y"]:
        day = day.replace(year=day.year + 1)
    return day


def _end_of(what: str, today: date) -> tuple[date, str]:
    if what in ("month", "next month"):
        first = today.replace(day=1)
        if what == "next month":
            first = (first + timedelta(days=32)).replace(day=1)
        end = (first + timedelta(days=32)).replace(day=1) - timedelta(days=1)
        return end, f"the end of {end:%B %Y}"
    if what in ("year", "next year"):
        year = today.year + (what == "next year")
        return date(year, 12, 31), f"the end of {year}"
    number = MONTHS[what]
    year = today.year + (number < today.month)
    end = (date(year, number, 28) + timedelta(days=4)).replace(day=1) - timedelta(days=1)
    return end, f"the end of {end:%B %Y}"


def _after(today: date, count: int, unit: str) -> date:
    if unit in ("day", "week"):
        return today + timedelta(days=count * (7 if unit == "week" else 1))
    months = count * (12 if unit == "year" else 1)
    index = today.year * 12 + today.month - 1 + months
    year, month = divmod(index, 12)
    last = (date(year, month + 1, 28) + timedelta(days=4)).replace(day=1) - timedelta(days=1)
    return date(year, month + 1, min(today.day, last.day))


def _named(q: str, today: date) -> tuple[date, str] | None:
    if re.search(r"\btomorrow\b", q):
        return today + timedelta(days=1), "tomorrow"
    if re.search(r"\bnext week\b", q):
        return today + timedelta(days=7), "a week from today"
    if re.search(r"\bnext month\b", q):
        return _end_of("next month", today)
    if re.search(r"\bnext year\b", q):
        return _end_of("next year", today)
    if re.search(r"\bchristmas\b", q):
        day = date(today.year, 12, 25)
        return (day if day >= today else day.replace(year=day.year + 1)), "Christmas"
    for index, name in enumerate(WEEKDAYS):
        if re.search(rf"\b(next |this |on )?{name}\b", q):
            ahead = (index - today.weekday()) % 7 or 7
            day = today + timedelta(days=ahead)
            return day, f"{name.title()} {day.isoformat()}"
    return None


NEXT_SOME = re.compile(
    r"\b(?:next|coming|following) (?P<n>\d{1,3}|" + "|".join(NUMBERS) + r") (?P<u>day|week)s?\b"
)


def days_ahead(text: str, today: date) -> tuple[int, str] | None:
    """Return how many days ahead a question about what is due asks for, or None (default)."""
    q = text.lower()
    if found := NEXT_SOME.search(q) or IN_SOME.search(q):
        count = NUMBERS.get(found["n"]) or int(found["n"])
        days = count * (7 if found["u"] == "week" else 1)
        if found["u"] in ("day", "week"):
            return days, f"the next {days} days"
    if re.search(r"\b(this|the rest of the|rest of this) week\b", q):
        days = 7 - today.weekday()
        return days, "the rest of this week"
    if re.search(r"\bnext week\b", q):
        return 14 - today.weekday(), "the rest of this week and next week"
    if re.search(r"\b(this|the rest of the|rest of this) month\b", q):
        end, _ = _end_of("month", today)
        return (end - today).days + 1, f"the rest of {today:%B %Y}"
    if re.search(r"\bnext month\b", q):
        end, _ = _end_of("next month", today)
        return (end - today).days + 1, f"now to the end of {end:%B %Y}"
    return None

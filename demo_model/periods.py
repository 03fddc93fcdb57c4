"""Date ranges named in questions: "this month", "last year", "in March", "last 30 days"..."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta

MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sept", "sep"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
NUMBERS = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}
NUMBERS |= {"eight": 8, "nine": 9, "ten": 10, "twelve": 12, "thirty": 30, "ninety": 90}


@dataclass(frozen=True)
class Period:
    """An inclusive date range, its human label and the unit it steps back by."""

    start: date
    end: date
    label: str
    # day, week, month, quarter, year, "rolling" (steps back by its own length), or "all": all
    # of the user's history, its dates known once the tools said when it starts (`settle`)
    unit: str

    def span(self) -> dict[str, str]:
        """Return the range as the tools' start_date / end_date input."""
        return {"start_date": self.start.isoformat(), "end_date": self.end.isoformat()}

    def text(self) -> str:
        """Return the label with the exact dates it covers."""
        if self.start == self.end:
            return f"{self.label} ({self.start.isoformat()})"
        return f"{self.label} ({self.start.isoformat()} to {self.end.isoformat()})"


ALL_HISTORY = "all your history"


def all_history(today: date) -> Period:
    """Return the default period of a question that names none: all of the user's history.

    Its start is not known yet: `settle` sets it from the user's first transaction.
    """
    return Period(today, today, ALL_HISTORY, "all")


def settle(period: Period, first: date | None, today: date, whole_months: bool = False) -> Period:
    """Return all of the history from `first` (None: no rows) to today; with `whole_months`,
    only the calendar months it covers whole (the current one is not over)."""
    start = min(first or today, today)
    if not whole_months:
        return Period(start, today, ALL_HISTORY, "all")
    begin = start if start.day == 1 else _month_end(start.year, start.month) + timedelta(days=1)
    end = today.replace(day=1) - timedelta(days=1)
    if begin > end:  # not one whole month yet: the month so far
        return Period(today.replace(day=1), today, f"{today:%B %Y} so far", "month")
    months = (end.year - begin.year) * 12 + end.month - begin.month + 1
    return Period(begin, end, f"the {months} whole months of your history", "rolling")


def month(today: date, year: int, number: int) -> Period:
    """Return a calendar month, cut at today when it is the current one."""
    start, last = date(year, number, 1), _month_end(year, number)
    end = min(last, today)
    label = start.strftime("%B %Y") + (" so far" if end < last else "")
    return Period(start, end, label, "month")


def month_back(today: date, back: int) -> Period:
    """Return the calendar month `back` months before today's."""
    index = today.year * 12 + today.month - 1 - back
    return month(today, index // 12, index % 12 + 1)


def year(today: date, number: int) -> Period:
    """Return a calendar year, cut at today when it is the current one."""
    end = min(date(number, 12, 31), today)
    label = f"{number} so far" if end < date(number, 12, 31) else str(number)
    return Period(date(number, 1, 1), end, label, "year")


def week_back(today: date, back: int) -> Period:
    """Return the Monday-to-Sunday week `back` weeks before today's."""
    start = today - timedelta(days=today.weekday() + 7 * back)
    end = min(start + timedelta(days=6), today)
    label = "this week" if back == 0 else f"the week of {start.isoformat()}"
    return Period(start, end, label, "week")


def quarter_back(today: date, back: int) -> Period:
    """Return the calendar quarter `back` quarters before today's."""
    index = today.year * 4 + (today.month - 1) // 3 - back
    number, q = index // 4, index % 4
    start, last = date(number, 3 * q + 1, 1), _month_end(number, 3 * q + 3)
    end = min(last, today)
    label = f"Q{q + 1} {number}" + (" so far" if end < last else "")
    return Period(start, end, label, "quarter")


def day(today: date, back: int) -> Period:
    """Return a single day `back` days before today."""
    when = today - timedelta(days=back)
    return Period(when, when, {0: "today", 1: "yesterday"}.get(back, str(when)), "day")


def rolling(today: date, count: int, unit: str) -> Period:
    """Return the last `count` days, weeks, months or years up to today."""
    if unit in ("day", "week"):
        start = today - timedelta(days=count * (7 if unit == "week" else 1) - 1)
    else:
        start = _add_months(today, -count * (12 if unit == "year" else 1)) + timedelta(days=1)
    label = f"the last {count} {unit}s" if count > 1 else f"the past {unit}"
    return Period(start, today, label, "rolling")


def _month_end(year: int, number: int) -> date:
    return date(year + number // 12, number % 12 + 1, 1) - timedelta(days=1)


def _add_months(day_: date, months: int) -> date:
    index = day_.year * 12 + day_.month - 1 + months
    year_, number = index // 12, index % 12 + 1
    return date(year_, number, min(day_.day, _month_end(year_, number).day))


def shift(period: Period, steps: int, today: date) -> Period:
    """Return the period `steps` units before (negative) or after `period`, whole units."""
    start = period.start
    if period.unit == "month":
        back = (today.year * 12 + today.month) - (start.year * 12 + start.month) - steps
        return month_back(today, back)
    if period.unit == "year":
        return year(today, start.year + steps)
    if period.unit == "quarter":
        back = (today.year * 4 + (today.month - 1) // 3) - (start.year * 4 + (start.month - 1) // 3)
        return quarter_back(today, back - steps)
    if period.unit == "week":
        monday = today - timedelta(days=today.weekday())
        return week_back(today, (monday - start).days // 7 - steps)
    length = (period.end - period.start).days + 1
    new_start = start + timedelta(days=length * steps)
    new_end = new_start + timedelta(days=length - 1)
    if period.unit == "day":
        return day(today, (today - new_start).days)
    return Period(new_start, new_end, f"the {length} days before", "rolling")


def _month_named(today: date, m: re.Match[str]) -> Period | None:
    number = MONTHS[m["m"]]
    if m["m"] == "may" and not (m["pre"] or m["y"]):
        return None  # "may I ..." is not the month
    when = int(m["y"]) if m["y"] else today.year - (number > today.month)
    found = month(today, when, number)
    if m["pre"] == "since":
        return Period(found.start, today, f"since {found.start.strftime('%B %Y')}", "rolling")
    return found if found.start <= today else None


def _year_named(today: date, m: re.Match[str]) -> Period | None:
    number = int(m["y"])
    # "2000" in "over 2000 dollars" is an amount, not a year anyone has data for.
    return year(today, number) if today.year - 10 < number <= today.year else None


def _rolling(today: date, m: re.Match[str]) -> Period:
    count = NUMBERS.get(m["n"]) or int(m["n"])
    return rolling(today, max(1, min(count, 3650)), m["u"])


MONTH_NAMES = "|".join(sorted(MONTHS, key=len, reverse=True))
PATTERNS: list[tuple[str, Callable[[date, re.Match[str]], Period | None]]] = [
    (r"\bmonth before last\b", lambda t, m: month_back(t, 2)),
    (
        r"\b(?P<pre>in|during|for|since|of|from)?\s*\b(?P<m>" + MONTH_NAMES + r")\b"
        r"(?:\s+(?P<y>(?:19|20)\d{2}))?",
        _month_named,
    ),
    (r"\b(this|current) month\b|\bmonth to date\b|\bmtd\b", lambda t, m: month_back(t, 0)),
    (r"\b(last|previous|prior) month\b", lambda t, m: month_back(t, 1)),
    (r"\b(this|current) year\b|\byear to date\b|\bytd\b", lambda t, m: year(t, t.year)),
    (r"\b(last|previous|prior) year\b", lambda t, m: year(t, t.year - 1)),
    (r"\b(this|current) week\b", lambda t, m: week_back(t, 0)),
    (r"\b(last|previous|prior) week\b", lambda t, m: week_back(t, 1)),
    (r"\b(this|current) quarter\b", lambda t, m: quarter_back(t, 0)),
    (r"\b(last|previous|prior) quarter\b", lambda t, m: quarter_back(t, 1)),
    (r"\btoday\b", lambda t, m: day(t, 0)),
    (r"\byesterday\b", lambda t, m: day(t, 1)),
    (
        r"\b(?:last|past|previous)\s+(?P<n>\d{1,4}|" + "|".join(NUMBERS) + r")\s+"
        r"(?P<u>day|week|month|year)s?\b",
        _rolling,
    ),
    (r"\b(?:the )?past (?P<u>day|week|month|year)\b", lambda t, m: rolling(t, 1, m["u"])),
    (r"\b(?:in |during |for )?(?P<y>(?:19|20)\d{2})\b", lambda t, m: _year_named(t, m)),
]
# Short forms people type: "this yr", "last mo", "past 3 wks".
SHORT_FORMS = (
    (r"\byrs\b", "years"),
    (r"\byr\b", "year"),
    (r"\bmos\b", "months"),
    (r"\b(mo|mth|mnth)\b", "month"),
    (r"\bwks\b", "weeks"),
    (r"\bwk\b", "week"),
)


def spelled_out(text: str) -> str:
    """Return `text` with the short forms of periods written out: "this yr" -> "this year"."""
    for short, long in SHORT_FORMS:
        text = re.sub(short, long, text)
    return text


RELATIVE = re.compile(
    r"\b(the )?(?P<u>day|week|month|quarter|year) before\b|\bprevious one\b|\bbefore that\b|"
    r"\bprior one\b"
)


def find_periods(text: str, today: date) -> list[Period]:
    """Return the periods a question names, in the order it names them."""
    q = text.lower()
    found: list[tuple[int, int, Period]] = []
    taken: list[tuple[int, int]] = []
    for pattern, build in PATTERNS:
        for m in re.finditer(pattern, q):
            start, end = m.span()
            if any(start < b and a < end for a, b in taken):
                continue
            period = build(today, m)
            if period is not None and period.start <= today:
                found.append((start, end, period))
                taken.append((start, end))
    return [p for _, _, p in sorted(found, key=lambda f: f[0])]


def without_periods(text: str) -> str:
    """Return `text` lowercased with every period it names blanked out."""
    q = text.lower()
    for pattern in [p for p, _ in PATTERNS] + [RELATIVE.pattern]:
        q = re.sub(pattern, " ", q)
    return q


def asks_relative(text: str) -> bool:
    """Return whether the question steps back from an earlier period ("the month before")."""
    return RELATIVE.search(text.lower()) is not None

"""The period every finance tool states: the dates asked for, or the stated default.

A question without a period covers all of the user's history (from their first transaction
to today, or to their last one when it is later), never silently "this month"; every result
says which period it covered as `period: {from, to, label}`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from models.finance import Transaction
from tools.finance.clock import add_months, days_in_month, today

ALL_HISTORY = "all history"
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]


@dataclass(frozen=True)
class Period:
    """An inclusive range of days and how a result names it."""

    start: date
    end: date
    label: str

    def stated(self) -> dict[str, str]:
        """Return the period as a result states it."""
        return {"from": self.start.isoformat(), "to": self.end.isoformat(), "label": self.label}


def history(s: Session, user_id: int) -> tuple[date, date]:
    """Return the user's first day and last day: first row to today (or a later row)."""
    now = today()
    first, last = s.execute(
        select(func.min(Transaction.posted_on), func.max(Transaction.posted_on)).where(
            Transaction.user_id == user_id
        )
    ).one()
    return min(first or now, now), max(last or now, now)


def resolve(s: Session, user_id: int, start: date | None, end: date | None) -> Period:
    """Return the period of `start`..`end`, an open side taken from the user's history."""
    if start is not None and end is not None:
        return Period(start, end, label(start, end))
    first, last = history(s, user_id)
    if start is None and end is None:
        return Period(first, last, ALL_HISTORY)
    begin, finish = start or min(first, end or first), end or max(last, start or last)
    return Period(begin, finish, label(begin, finish))


def capped(period: Period, months: int) -> Period:
    """Return `period` cut to its last `months` calendar months, saying so when it was cut."""
    earliest = add_months(period.end.replace(day=1), -(months - 1))
    if period.start >= earliest:
        return period
    return Period(earliest, period.end, f"{period.label}, its last {months} months")


def label(start: date, end: date) -> str:
    """Name a range: "March 2025", "2025", or its dates."""
    whole_month = start.day == 1 and end == start.replace(
        day=days_in_month(start.year, start.month)
    )
    if whole_month:
        return f"{MONTHS[start.month - 1]} {start.year}"
    if (start.month, start.day, end.month, end.day) == (1, 1, 12, 31) and start.year == end.year:
        return str(start.year)
    if start == end:
        return start.isoformat()
    return f"{start.isoformat()} to {end.isoformat()}"


def stated(start: date, end: date, name: str | None = None) -> dict[str, Any]:
    """Return `period: {from, to, label}` for a range (labelled `name` when given)."""
    return Period(start, end, name or label(start, end)).stated()

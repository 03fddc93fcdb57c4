"""The finance tools' notion of "today", which tests and the demo seeder can pin."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, date, datetime

_pinned: ContextVar[date | None] = ContextVar("finance_today", default=None)


def today() -> date:
    """Return the pinned day if any, else today's date in UTC."""
    return _pinned.get() or datetime.now(UTC).date()


@contextmanager
def pinned_today(day: date) -> Iterator[date]:
    """Make `today()` return `day` inside the block (per thread / task)."""
    token = _pinned.set(day)
    try:
        yield day
    finally:
        _pinned.reset(token)


def month_start(day: date) -> date:
    """Return the first day of `day`'s month."""
    return day.replace(day=1)


def add_months(day: date, months: int) -> date:
    """Return `day` shifted by `months`, clamping the day to the target month's length."""
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    return date(year, month + 1, min(day.day, days_in_month(year, month + 1)))


def days_in_month(year: int, month: int) -> int:
    """Return the number of days in `month` of `year`."""
    nxt = date(year + month // 12, month % 12 + 1, 1)
    return (nxt - date(year, month, 1)).days

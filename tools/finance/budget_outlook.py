"""What the user's budgets still allow to be spent up to a date: a forecast's optional part.

For each month up to the date, a budget's limit (this month: what is left of it) is spread
evenly over its days; the days up to the date count. It is an allowance, not a prediction, so
the forecast shows it apart: the projected balance with it and without it. What the
recurring series already take from a budgeted category in a month (the rent, a subscription)
is not counted twice.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, timedelta
from fractions import Fraction
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from domain.money import format_minor
from models.finance import Budget, Category
from tools.finance.cites import budget_source, budget_title, search_result
from tools.finance.clock import add_months, days_in_month, month_start
from tools.finance.queries import spending_totals


@dataclass
class Outlook:
    """The spending each budget allows from tomorrow to the date, in its currency."""

    # (budget id, category, month "YYYY-MM", limit minor, currency, allowed minor)
    items: list[tuple[int, str, str, int, str, int]] = field(default_factory=list)

    def allowed(self) -> dict[str, int]:
        """Return the allowance per currency."""
        out: dict[str, int] = defaultdict(int)
        for *_, currency, minor in self.items:
            out[currency] += minor
        return out

    def result(self, totals: dict[str, list[int]]) -> list[dict[str, Any]]:
        """Return, per currency, the allowance and the projected balance less it."""
        allowed = self.allowed()
        return [
            {
                "currency": cur,
                "budgeted_spending": format_minor(minor, cur),
                "projected_balance_with_budgets": format_minor(totals[cur][1] - minor, cur),
            }
            for cur, minor in sorted(allowed.items())
            if cur in totals
        ]

    def sources(self) -> list[dict[str, Any]]:
        """Return one search result per budget month counted."""
        out = []
        for ident, name, month, limit, cur, minor in self.items:
            text = (
                f"{name} budget, {month}: limit {format_minor(limit, cur)} {cur}; "
                f"{format_minor(minor, cur)} {cur} of it counted up to the date."
            )
            title = budget_title(name, month, format_minor(limit, cur), cur)
            out.append(search_result(budget_source(ident), title, text))
        return out


def budget_outlook(
    s: Session, user_id: int, now: date, on: date, planned: dict[tuple[str, str, str], int]
) -> Outlook:
    """Return what the user's budgets allow from tomorrow to `on`.

    `planned`: what the series already take, by (category, currency, month "YYYY-MM").
    """
    found = s.execute(
        select(Budget, Category.name)
        .join(Category, Category.id == Budget.category_id)
        .where(Budget.user_id == user_id, Category.user_id == user_id)
    ).all()
    first = month_start(now)
    spent_now = {
        (category_id, cur): minor
        for category_id, cur, minor, *_ in spending_totals(s, user_id, first, now, Category.id)
    }
    outlook = Outlook()
    month = first
    while month <= on:
        last = month.replace(day=days_in_month(month.year, month.month))
        begin, end = max(month, now + timedelta(days=1)), min(last, on)
        chosen: dict[int, tuple[Budget, str]] = {}
        for budget, name in found:
            if budget.month in (None, month) and (
                budget.category_id not in chosen or budget.month is not None
            ):
                chosen[budget.category_id] = (budget, name)
        for budget, name in chosen.values():
            left = budget.limit_minor
            if month == first:
                left = max(0, left - spent_now.get((budget.category_id, budget.currency), 0))
            days_left = (last - max(month, now + timedelta(days=1))).days + 1
            counted = (end - begin).days + 1
            if counted <= 0 or days_left <= 0:
                continue
            label = month.strftime("%Y-%m")
            share = int(Fraction(left * counted, days_left) + Fraction(1, 2))
            minor = max(0, share - planned.get((name, budget.currency, label), 0))
            outlook.items.append(
                (budget.id, name, label, budget.limit_minor, budget.currency, minor)
            )
        month = add_months(month, 1)
    return outlook

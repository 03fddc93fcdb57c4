"""budget_progress chart: a budget's spend, day by day through its month, against its limit.

Every recorded figure is computed from the user's rows; each point of the spend line cites the
category's spending from the month's first day to that day, the limit line cites the budget.
In the month under way the line goes on, dashed, to the spend projected at the pace so far.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from domain.money import format_minor
from models.finance import Budget, Transaction
from tools.finance import chart_specs
from tools.finance.cites import budget_source, spend_source
from tools.finance.clock import days_in_month, today
from tools.finance.flows import net_spending
from tools.finance.periods import stated
from tools.finance.queries import CategoryRef, category_clause, resolve_category, with_category
from tools.registry import Sourced, ToolContext, ToolInputError

SPENT, LIMIT, PROJECTED = "Spent", "Limit", "Projected"


def budget_progress(ctx: ToolContext, data: dict[str, Any]) -> Sourced:
    """Return the budget's cumulative spend per day of start_date's month, with its limit."""
    if not data.get("category"):
        raise ToolInputError("category", "budget_progress needs the budgeted category's name.")
    start = data.get("start_date") or today()
    first = start.replace(day=1)
    last = first.replace(day=days_in_month(first.year, first.month))
    with ctx.db.read() as s:
        ref = resolve_category(s, ctx.user_id, data["category"])
        budget = _budget(s, ctx.user_id, ref, first)
        if budget is None:
            raise ToolInputError(
                "category", f"{ref.name} has no budget for {first.strftime('%Y-%m')}."
            )
        daily = _daily_spend(s, ctx.user_id, ref, first, last, budget.currency)
    out: dict[str, Any] = {
        "kind": "budget_progress",
        "period": stated(first, last),
        "start_date": first.isoformat(),
        "end_date": last.isoformat(),
        "category": ref.name,
        "charts": [_spec(budget, ref.name, daily, first, last)],
        "note": "A budget covers one month: the chart shows the month of start_date. Spend in "
        "other currencies than the budget's is not converted and not counted.",
    }
    return Sourced(out, [])


def _budget(s: Session, user_id: int, ref: CategoryRef, first: date) -> Budget | None:
    # A budget for this very month overrides the recurring one, as in get_budget_status.
    found = s.scalars(
        select(Budget).where(
            Budget.user_id == user_id,
            Budget.category_id == ref.id,
            or_(Budget.month == first, Budget.month.is_(None)),
        )
    ).all()
    ranked = sorted(found, key=lambda b: b.month is None)
    return ranked[0] if ranked else None


def _daily_spend(
    s: Session, user_id: int, ref: CategoryRef, first: date, last: date, currency: str
) -> dict[date, list[int]]:
    columns: Any = select(Transaction.posted_on, Transaction.amount_minor)
    stmt = with_category(columns, user_id).where(
        Transaction.user_id == user_id,
        Transaction.posted_on >= first,
        Transaction.posted_on <= last,
        Transaction.currency == currency,
        category_clause(ref),
        net_spending(),
    )
    daily: dict[date, list[int]] = {}
    for day, minor in s.execute(stmt):
        cell = daily.setdefault(day, [0, 0])
        cell[0] -= int(minor)
        cell[1] += 1
    return daily


def _spec(
    budget: Budget, name: str, daily: dict[date, list[int]], first: date, last: date
) -> dict[str, Any]:
    cur = budget.currency
    limit = chart_specs.value("", LIMIT, budget.limit_minor, cur, 0, [budget_source(budget.id)])
    # Recorded through today (or the last day with rows); after that, in the month under way,
    # the spend projected to the month's end at its pace so far.
    now = today()
    upto = last if not first <= now < last else max([now, *daily])
    spent, count, day = 0, 0, first
    recorded: list[dict[str, Any]] = []
    while day <= upto:
        minor, rows = daily.get(day, [0, 0])
        spent, count = spent + minor, count + rows
        sources = [spend_source(name, first, day)]
        recorded.append(chart_specs.value(day.isoformat(), SPENT, spent, cur, count, sources))
        day += timedelta(days=1)
    ahead = [] if spent <= 0 else _pace(spent, upto, last, cur)
    days = [(first + timedelta(days=n)).isoformat() for n in range((last - first).days + 1)]
    values = chart_specs.projection(recorded, ahead) + [{**limit, "x": x} for x in days]
    title = f"{name} budget, {first.strftime('%Y-%m')} ({cur})"
    spec = chart_specs.line(title, cur, values, "Day", "Amount")
    spec["totals"] = {SPENT: format_minor(spent, cur), LIMIT: limit["amount"]}
    if ahead:
        spec["totals"][PROJECTED] = ahead[-1]["amount"]
        spec["note"] = (
            f"Dashed: the spend projected to {last.isoformat()} at the pace so far "
            f"({format_minor(spent, cur)} {cur} in {upto.day} days), not a recorded figure."
        )
    return spec


def _pace(spent: int, upto: date, last: date, cur: str) -> list[dict[str, Any]]:
    """The month's remaining days at the pace so far (minor units, rounded half up)."""
    out, day = [], upto + timedelta(days=1)
    while day <= last:
        minor = (2 * spent * day.day + upto.day) // (2 * upto.day)
        out.append(chart_specs.value(day.isoformat(), SPENT, minor, cur, 0, []))
        day += timedelta(days=1)
    return out

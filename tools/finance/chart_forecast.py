"""balance_forecast chart: a balance as it was (actual) and as it is expected to be (projected).

The actual line is today's posted balance less the posted rows after each point, each point
citing the account and those rows; the projected line, dashed, starts from today's balance and
adds the pending rows and each expected occurrence of the active recurring series
(tools/finance/forecast.py) up to end_date, the series it used named in the result. One chart
for an account, or one per currency for all the user's accounts in it.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from sqlalchemy import select

from domain.money import format_minor
from models.finance import Transaction
from tools.finance import chart_specs
from tools.finance.cites import account_source, txns_source
from tools.finance.clock import add_months, days_in_month, today
from tools.finance.forecast import MAX_DAYS_AHEAD, Projection, project
from tools.finance.periods import stated
from tools.registry import Sourced, ToolContext, ToolInputError

BALANCE, PROJECTED = "Balance", "Projected"
MAX_POINTS = 400


def balance_forecast(ctx: ToolContext, data: dict[str, Any]) -> Sourced:
    """Return the actual and projected balance line of an account, or of each currency."""
    now = today()
    end = data.get("end_date") or now + timedelta(days=90)
    start = data.get("start_date") or add_months(now, -3)
    if end <= now or (end - now).days > MAX_DAYS_AHEAD:
        raise ToolInputError(
            "end_date",
            f"balance_forecast projects from tomorrow up to {MAX_DAYS_AHEAD} days "
            f"ahead: pass an end_date after today ({now.isoformat()}).",
        )
    if start >= now:
        raise ToolInputError(
            "start_date",
            "start_date is where the actual line starts: pass a "
            f"day before today ({now.isoformat()}), or omit it.",
        )
    with ctx.db.read() as s:
        projections = project(s, ctx.user_id, end, data.get("account"))
        ids = [p.account.id for p in projections]
        moved = s.execute(
            select(Transaction.account_id, Transaction.posted_on, Transaction.amount_minor).where(
                Transaction.user_id == ctx.user_id,
                Transaction.account_id.in_(ids),
                Transaction.pending.is_(False),
                Transaction.posted_on > start,
            )
        ).all()
    rows = [(a, d, int(m)) for a, d, m in moved]
    if data.get("account"):
        groups = [projections]
    else:
        currencies = sorted({p.account.currency for p in projections})
        groups = [[p for p in projections if p.account.currency == c] for c in currencies]
    charts = [_spec(group, rows, start, now, end) for group in groups if group]
    used = {o.found.series.id: o.found.name for p in projections for o in p.occurrences}
    out: dict[str, Any] = {
        "kind": "balance_forecast",
        "period": stated(
            start,
            end,
            f"{start.isoformat()} to {end.isoformat()}, projected after {now.isoformat()}",
        ),
        "start_date": start.isoformat(),
        "end_date": end.isoformat(),
        "account": projections[0].account.name if data.get("account") and projections else None,
        "charts": charts,
        "series_used": [{"series_id": k, "name": v} for k, v in sorted(used.items())],
        "note": "Actual: the posted balance at each month's end and today. Projected: today's "
        "balance plus pending rows and the expected occurrences of the active recurring series, "
        "at their latest amounts. Amounts are signed; currencies are never added together.",
    }
    if not charts:
        out["note"] = "The user has no accounts: there is no balance to chart."
    return Sourced(out, [])


def _spec(
    group: list[Projection], rows: list[tuple[int, date, int]], start: date, now: date, end: date
) -> dict[str, Any]:
    cur = group[0].account.currency
    ids = {p.account.id for p in group}
    mine = [(d, m) for a, d, m in rows if a in ids]
    balance = sum(p.account.balance_minor for p in group)
    accounts = [account_source(p.account.id) for p in group]
    recorded = []
    for day in _actual_days(start, now):
        after = [m for d, m in mine if d > day]
        sources = list(accounts)
        if day < now:
            sources += [
                txns_source(
                    {
                        "start_date": day + timedelta(days=1),
                        "end_date": now,
                        "account": p.account.name,
                        "pending": False,
                    }
                )
                for p in group
            ]
        recorded.append(
            chart_specs.value(
                day.isoformat(), BALANCE, balance - sum(after), cur, len(after), sources
            )
        )
    moves: list[tuple[date, int, str]] = []
    for p in group:
        moves += [(max(d, now + timedelta(days=1)), a, f"txn:{i}") for i, d, a in p.pending]
        moves += [(o.day, o.amount, o.found.series.id) for o in p.occurrences]
    # Projected rows carry no sources (docs/tools.md#charts): the result's series_used and the
    # forecast tool name and cite what they rest on.
    running, ahead = balance, []
    days = sorted({d for d, _, _ in moves if now < d <= end} | {end})
    for day in days[:MAX_POINTS]:
        running += sum(amount for when, amount, _ in moves if when == day)
        ahead.append(chart_specs.value(day.isoformat(), BALANCE, running, cur, 0, []))
    names = group[0].account.name if len(group) == 1 else f"All {cur} accounts"
    title = f"{names} balance: actual to {now.isoformat()}, projected to {end.isoformat()} ({cur})"
    values = chart_specs.projection(recorded, ahead)
    spec = chart_specs.line(title, cur, values, "Date", "Balance")
    spec["totals"] = {BALANCE: format_minor(balance, cur), PROJECTED: format_minor(running, cur)}
    spec["note"] = (
        f"Dashed: the balance projected from the recurring series to {end.isoformat()}, not a "
        "recorded figure."
    )
    return spec


def _actual_days(start: date, now: date) -> list[date]:
    """The actual line's days: the start, each month's end after it, and today."""
    days, month = [start], start.replace(day=1)
    while True:
        last = month.replace(day=days_in_month(month.year, month.month))
        if last >= now:
            break
        if last > start:
            days.append(last)
        month = add_months(month, 1)
    return [*days, now]

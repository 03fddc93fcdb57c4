"""chart: a Vega-Lite bar chart of the user's own rows, each bar citing the rows it sums.

The figures are computed here from the transactions, never written by the model; every bar
carries `sources`, the `txns:` queries whose rows add up to it exactly (spending and income as
the one money rule counts them, tools/finance/flows.py: net spending is spending less its
refunds, transfers between the user's accounts are neither).
"""

from __future__ import annotations

from collections import defaultdict
from datetime import date
from decimal import Decimal
from typing import Any

from sqlalchemy import select

from domain.money import format_minor, to_decimal
from models.finance import Category, Transaction
from tools.finance.chart_balance import account_balance
from tools.finance.chart_budget import budget_progress
from tools.finance.chart_forecast import balance_forecast
from tools.finance.cites import spend_source, txns_source
from tools.finance.clock import days_in_month
from tools.finance.flows import INCOME as FLOW_INCOME
from tools.finance.flows import REFUND, SPENDING, flow
from tools.finance.periods import capped
from tools.finance.periods import resolve as resolve_period
from tools.finance.queries import (
    UNCATEGORIZED,
    CategoryRef,
    category_clause,
    check_range,
    period_clause,
    resolve_category,
    with_category,
)
from tools.registry import Sourced, ToolContext, ToolInputError

MAX_MONTHS = 36
MAX_BARS = 12
VEGA_LITE = "https://vega.github.io/schema/vega-lite/v5.json"
SPENT, INCOME = "Spent", "Income"

# (x, series, currency) -> [minor total, rows, {source: None}] (a dict keeps sources in order)
Cells = dict[tuple[str, str, str], list[Any]]


def chart(ctx: ToolContext, data: dict[str, Any]) -> Sourced:
    """Return one Vega-Lite spec per currency, with the bars' data and the rows each rests on."""
    kind = data["kind"]
    check_range(data.get("start_date"), data.get("end_date"), "start_date", "end_date")
    if kind == "budget_progress":
        return budget_progress(ctx, data)
    if kind == "balance_forecast":
        return balance_forecast(ctx, data)
    with ctx.db.read() as s:
        period = resolve_period(s, ctx.user_id, data.get("start_date"), data.get("end_date"))
    if kind != "spending_by_category" and len(_months(period.start, period.end)) > MAX_MONTHS:
        if data.get("start_date") is not None:
            raise ToolInputError(
                "end_date",
                f"a chart by month shows at most {MAX_MONTHS} months; narrow the period.",
            )
        period = capped(period, MAX_MONTHS)  # all history, but the last months of it
    start, end = period.start, period.end
    data = {**data, "start_date": start, "end_date": end}
    months = _months(start, end)
    if kind == "account_balance":
        return account_balance(ctx, data, months, period.stated())
    with ctx.db.read() as s:
        ref = None
        if data.get("category") and kind == "spending_by_month":
            ref = resolve_category(s, ctx.user_id, data["category"])
        rows = _rows(s, ctx.user_id, start, end, ref)
    cells = _cells(rows, kind, start, end)
    currencies = sorted({cur for _, _, cur in cells})
    charts = [_spec(kind, cur, cells, months, ref, start, end) for cur in currencies]
    out: dict[str, Any] = {
        "kind": kind,
        "period": period.stated(),
        "start_date": start.isoformat(),
        "end_date": end.isoformat(),
        "category": ref.name if ref else None,
        "charts": charts,
        "note": "Each bar is computed from the user's transactions; amounts are never converted "
        "between currencies, so each currency has its own chart.",
    }
    if not charts:
        out["note"] = "No transactions in this period: there is nothing to chart."
    return Sourced(out, [])


def _rows(
    s: Any, user_id: int, start: date, end: date, ref: CategoryRef | None
) -> list[tuple[date, str | None, str | None, str, int]]:
    columns: Any = select(
        Transaction.posted_on,
        Category.name,
        flow(),
        Transaction.currency,
        Transaction.amount_minor,
    )
    stmt = with_category(columns, user_id).where(
        Transaction.user_id == user_id, *period_clause(start, end)
    )
    if ref is not None:
        stmt = stmt.where(category_clause(ref))
    return [(r[0], r[1], r[2], r[3], int(r[4])) for r in s.execute(stmt)]


def _cells(
    rows: list[tuple[date, str | None, str, str, int]], drawn: str, start: date, end: date
) -> Cells:
    cells: Cells = defaultdict(lambda: [0, 0, {}])
    for day, name, kind, currency, minor in rows:
        spend = kind in (SPENDING, REFUND)
        month = day.strftime("%Y-%m")
        first, last = _month_span(month, start, end)
        category = name or UNCATEGORIZED
        if spend:
            x = category if drawn == "spending_by_category" else month
            span = (start, end) if drawn == "spending_by_category" else (first, last)
            cell = cells[(x, SPENT, currency)]
            cell[0] -= minor
            cell[2][spend_source(category, *span)] = None
        elif drawn == "income_vs_spending" and kind == FLOW_INCOME:
            cell = cells[(month, INCOME, currency)]
            cell[0] += minor
            where = {"start_date": first, "end_date": last, "category": category}
            cell[2][txns_source({**where, "flow": FLOW_INCOME})] = None
        else:
            continue
        cell[1] += 1
    return cells


def _spec(
    kind: str,
    currency: str,
    cells: Cells,
    months: list[str],
    ref: CategoryRef | None,
    start: date,
    end: date,
) -> dict[str, Any]:
    mine = {(x, series): v for (x, series, cur), v in cells.items() if cur == currency}
    if kind == "spending_by_category":
        ranked = sorted(mine.items(), key=lambda kv: (-kv[1][0], kv[0][0]))
        keys = [k for k, _ in ranked[:MAX_BARS]]
        x_title, series = "Category", [SPENT]
    else:
        series = [INCOME, SPENT] if kind == "income_vs_spending" else [SPENT]
        keys = [(m, name) for m in months for name in series]
        x_title = "Month"
    values = []
    for x, name in keys:
        minor, count, sources = mine.get((x, name), [0, 0, {}])
        values.append(
            {
                "x": x,
                "series": name,
                "y": float(to_decimal(minor, currency)),
                "amount": format_minor(minor, currency),
                "count": count,
                "sources": list(sources),
            }
        )
    what = {
        "spending_by_month": f"{ref.name} spending by month" if ref else "Spending by month",
        "spending_by_category": "Spending by category",
        "income_vs_spending": "Income and spending by month",
    }[kind]
    title = f"{what}, {start.isoformat()} to {end.isoformat()} ({currency})"
    spec: dict[str, Any] = {
        "$schema": VEGA_LITE,
        "title": title,
        "description": f"{title}: bar chart with {len(values)} bars",
        "currency": currency,
        "data": {"values": values},
        "mark": {"type": "bar"},
        "encoding": {
            "x": {"field": "x", "type": "ordinal", "title": x_title, "sort": None},
            "y": {"field": "y", "type": "quantitative", "title": f"Amount ({currency})"},
        },
    }
    if len(series) > 1:
        spec["encoding"]["color"] = {"field": "series", "type": "nominal", "title": None}
        spec["encoding"]["xOffset"] = {"field": "series"}
    totals: dict[str, int] = defaultdict(int)
    shown = set(keys)
    for (x, name), v in mine.items():
        if (x, name) in shown:
            totals[name] += v[0]
    spec["totals"] = {name: format_minor(totals[name], currency) for name in series}
    if kind == "spending_by_category" and len(mine) > len(keys):
        spec["note"] = f"The {MAX_BARS} largest categories of {len(mine)}."
    return spec


def _months(start: date, end: date) -> list[str]:
    out, year, month = [], start.year, start.month
    while (year, month) <= (end.year, end.month):
        out.append(f"{year:04d}-{month:02d}")
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return out


def _month_span(month: str, start: date, end: date) -> tuple[date, date]:
    year, number = map(int, month.split("-"))
    first = date(year, number, 1)
    last = first.replace(day=days_in_month(year, number))
    return max(first, start), min(last, end)


def total(values: list[dict[str, Any]], series: str) -> Decimal:
    """Return the sum of one series' exact amounts (for checks against the other tools)."""
    return sum((Decimal(v["amount"]) for v in values if v["series"] == series), Decimal(0))

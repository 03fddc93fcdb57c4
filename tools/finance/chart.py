"""chart: Vega-Lite charts of the user's own rows, each bar, slice or point citing its rows.

The figures are computed here from the transactions, never written by the model; every bar
carries `sources`, the `txns:` queries whose rows add up to it exactly (spending and income as
the one money rule counts them, tools/finance/flows.py: net spending is spending less its
refunds, transfers between the user's accounts are neither).
"""

from __future__ import annotations

from collections import defaultdict
from datetime import date
from decimal import Decimal
from typing import Any, TypeVar

from sqlalchemy import select

from domain.money import format_minor
from models.finance import Category, Transaction
from tools.finance import chart_specs
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
MAX_SLICES = 7  # and "Other categories": the page's eight series colours
MAX_STACKED = 6
SPENT, INCOME, OTHER = "Spent", "Income", "Other categories"
BY_CATEGORY = ("spending_by_category", "category_share")
WHAT = {
    "spending_by_month": "Spending by month",
    "spending_by_category": "Spending by category",
    "category_share": "Share of spending by category",
    "category_by_month": "Spending by month and category",
    "income_vs_spending": "Income and spending by month",
}

# [minor total, rows, {source: None}] (a dict keeps sources in order)
Cell = list[Any]
# (x, series, currency) -> its cell; Cells2: (x, series) -> its cell, in one currency
Cells = dict[tuple[str, str, str], Cell]
Cells2 = dict[tuple[str, str], Cell]
T = TypeVar("T")


def chart(ctx: ToolContext, data: dict[str, Any]) -> Sourced:
    """Return one Vega-Lite spec per currency, with the figures and the rows each rests on."""
    kind = data["kind"]
    check_range(data.get("start_date"), data.get("end_date"), "start_date", "end_date")
    if kind == "budget_progress":
        return budget_progress(ctx, data)
    if kind == "balance_forecast":
        return balance_forecast(ctx, data)
    with ctx.db.read() as s:
        period = resolve_period(s, ctx.user_id, data.get("start_date"), data.get("end_date"))
    if kind not in BY_CATEGORY and len(_months(period.start, period.end)) > MAX_MONTHS:
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
) -> list[tuple[date, str | None, str, str, int]]:
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
    whole = drawn in BY_CATEGORY  # one figure per category over the whole period
    for day, name, kind, currency, minor in rows:
        spend = kind in (SPENDING, REFUND)
        month = day.strftime("%Y-%m")
        first, last = _month_span(month, start, end)
        category = name or UNCATEGORIZED
        if spend:
            x = category if whole else month
            series = category if drawn == "category_by_month" else SPENT
            span = (start, end) if whole else (first, last)
            cell = cells[(x, series, currency)]
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
    title = f"{_what(kind, ref)}, {start.isoformat()} to {end.isoformat()} ({currency})"
    if kind == "category_by_month":
        return _stacked(title, currency, mine, months)
    if kind in BY_CATEGORY:
        ranked = sorted(mine.items(), key=lambda kv: (-kv[1][0], kv[0][0]))
        if kind == "category_share":
            return _donut(title, currency, ranked)
        keys = [k for k, _ in ranked[:MAX_BARS]]
        x_title, series = "Category", [SPENT]
    else:
        series = [INCOME, SPENT] if kind == "income_vs_spending" else [SPENT]
        keys = [(m, name) for m in months for name in series]
        x_title = "Month"
    values, sums = _drawn([(x, name, mine.get((x, name))) for x, name in keys], series, currency)
    spec = chart_specs.bars(title, currency, values, x_title)
    spec["totals"] = sums
    if kind == "spending_by_category" and len(mine) > len(keys):
        spec["note"] = f"The {MAX_BARS} largest categories of {len(mine)}."
    return spec


def _stacked(title: str, currency: str, mine: Cells2, months: list[str]) -> dict[str, Any]:
    """Each month's spending as a stack of its categories: the largest, then the rest as one."""
    spent: dict[str, int] = defaultdict(int)
    for (_, category), cell in mine.items():
        spent[category] += cell[0]
    ranked = sorted(spent, key=lambda c: (-spent[c], c))
    shown, rest = _cut(ranked, MAX_STACKED)
    series = shown + ([OTHER] if rest else [])
    cells: list[tuple[str, str, Cell | None]] = []
    for month in months:
        cells += [(month, name, mine.get((month, name))) for name in shown]
        if rest:
            cells.append((month, OTHER, _merged([mine.get((month, name)) for name in rest])))
    values, sums = _drawn(cells, series, currency)
    spec = chart_specs.bars(title, currency, values, "Month", stacked=True)
    spec["totals"] = sums
    if rest:
        spec["note"] = _rest_note(MAX_STACKED, len(rest))
    return spec


def _donut(title: str, currency: str, ranked: list[tuple[tuple[str, str], Cell]]) -> dict[str, Any]:
    """Each category's share of the period's spending: the largest, then the rest as one."""
    spent = [(x, cell) for (x, _), cell in ranked if cell[0] > 0]
    shown, rest = _cut(spent, MAX_SLICES)
    cells: list[tuple[str, str, Cell | None]] = [(x, SPENT, cell) for x, cell in shown]
    if rest:
        cells.append((OTHER, SPENT, _merged([cell for _, cell in rest])))
    values, sums = _drawn(cells, [SPENT], currency)
    spec = chart_specs.donut(title, currency, values, "Category")
    spec["totals"] = sums
    notes = []
    if rest:
        notes.append(_rest_note(MAX_SLICES, len(rest)))
    if len(spent) < len(ranked):
        notes.append("Categories whose refunds match or pass their spending are left out.")
    if notes:
        spec["note"] = " ".join(notes)
    return spec


def _drawn(
    cells: list[tuple[str, str, Cell | None]], series: list[str], currency: str
) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The spec's rows of (x, series, cell), a cell missing at zero, and each series' total."""
    values, sums = [], dict.fromkeys(series, 0)
    for x, name, cell in cells:
        minor, count, sources = cell or [0, 0, {}]
        values.append(chart_specs.value(x, name, minor, currency, count, list(sources)))
        sums[name] += minor
    return values, {name: format_minor(minor, currency) for name, minor in sums.items()}


def _merged(cells: list[Cell | None]) -> Cell:
    """Several cells added up into one: their figures, rows and sources."""
    out: Cell = [0, 0, {}]
    for cell in cells:
        if cell:
            out[0] += cell[0]
            out[1] += cell[1]
            out[2].update(cell[2])
    return out


def _cut(ranked: list[T], most: int) -> tuple[list[T], list[T]]:
    """The first `most` to show, and the rest to add up as one (never just one of them)."""
    return (ranked, []) if len(ranked) <= most + 1 else (ranked[:most], ranked[most:])


def _rest_note(shown: int, rest: int) -> str:
    return f"The {shown} largest categories; {OTHER} adds up the {rest} others."


def _what(kind: str, ref: CategoryRef | None) -> str:
    if kind == "spending_by_month" and ref:
        return f"{ref.name} spending by month"
    return WHAT[kind]


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

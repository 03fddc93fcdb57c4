"""get_cash_flow: money in against money out over a period, per currency, by the one money rule.

Income is every inflow that is neither a refund nor a transfer, categorised or not; spending is
shown before and after refunds; transfers between the user's own accounts are shown apart and
counted in neither. The savings rate is (income - net spending) / income.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import date
from typing import Any

from sqlalchemy import func, select

from domain.money import format_minor, percent
from models.finance import Category, Transaction
from tools.finance.cites import search_result, txns_source
from tools.finance.flows import INCOME, NET_SPENDING, REFUND, SPENDING, TRANSFER, flow
from tools.finance.periods import Period
from tools.finance.periods import resolve as resolve_period
from tools.finance.queries import UNCATEGORIZED, check_range, period_clause, with_category
from tools.registry import MAX_SOURCES, Sourced, ToolContext

MAX_MONTHS = 60
# What each figure is, with the get_transactions flow filter whose rows add up to it.
FIGURES = (
    ("income", INCOME, "Income"),
    ("spending_before_refunds", SPENDING, "Spending before refunds"),
    ("refunds", REFUND, "Refunds"),
    ("spending", NET_SPENDING, "Spending after refunds"),
    ("transfers", TRANSFER, "Transfers between own accounts"),
)


class Cell:
    """Money of one currency (and month): per flow, the sum in minor units and the count."""

    def __init__(self) -> None:
        self.sums: dict[str, int] = defaultdict(int)
        self.counts: dict[str, int] = defaultdict(int)
        self.income: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        self.transfers = [0, 0]  # money in, money out

    def add(self, kind: str, category: str | None, minor: int, count: int) -> None:
        """Count `count` rows of one flow and category summing to `minor`."""
        self.sums[kind] += minor
        self.counts[kind] += count
        if kind == INCOME:
            cell = self.income[category or UNCATEGORIZED]
            cell[0] += minor
            cell[1] += count
        if kind == TRANSFER:
            self.transfers[0 if minor > 0 else 1] += minor

    def figures(self, cur: str) -> dict[str, Any]:
        """Return the cell's figures as the tool states them."""
        income, out = self.sums[INCOME], -self.sums[SPENDING]
        back = self.sums[REFUND]
        spent = out - back
        return {
            "income": format_minor(income, cur),
            "spending_before_refunds": format_minor(out, cur),
            "refunds": format_minor(back, cur),
            "spending": format_minor(spent, cur),
            "net": format_minor(income - spent, cur),
            "savings_rate_pct": percent(income - spent, income) if income > 0 else None,
        }


def get_cash_flow(ctx: ToolContext, data: dict[str, Any]) -> Sourced:
    """Return income, spending before and after refunds, net and savings rate per currency."""
    check_range(data.get("start_date"), data.get("end_date"), "start_date", "end_date")
    by_month = data["group_by"] == "month"
    with ctx.db.read() as s:
        period = resolve_period(s, ctx.user_id, data.get("start_date"), data.get("end_date"))
        inner = (
            with_category(
                select(
                    Transaction.currency.label("currency"),
                    flow().label("kind"),
                    Category.name.label("category"),
                    Transaction.posted_on.label("day"),
                    Transaction.amount_minor.label("amount"),
                ),
                ctx.user_id,
            )
            .where(Transaction.user_id == ctx.user_id, *period_clause(period.start, period.end))
            .subquery()
        )
        keys = [inner.c.currency, inner.c.kind, inner.c.category]
        if by_month:
            keys.append(inner.c.day)
        stmt = select(*keys, func.sum(inner.c.amount), func.count()).group_by(*keys)
        rows = [(*r[:3], r[3] if by_month else None, r[-2], r[-1]) for r in s.execute(stmt)]
    whole: dict[str, Cell] = defaultdict(Cell)
    months: dict[str, dict[str, Cell]] = defaultdict(lambda: defaultdict(Cell))
    for cur, kind_, category, when, minor, count in rows:
        whole[cur].add(kind_, category, int(minor), int(count))
        if by_month and isinstance(when, date):
            months[cur][when.strftime("%Y-%m")].add(kind_, category, int(minor), int(count))
    currencies = [_block(cur, cell, months.get(cur)) for cur, cell in sorted(whole.items())]
    out: dict[str, Any] = {
        "period": period.stated(),
        "currencies": currencies,
        "rule": "income = every inflow that is not a refund or a transfer, categorized or not; "
        "spending = money out that is not a transfer; refunds = money back for spending "
        "(taken off spending); transfers between the user's own accounts count in neither; "
        "net = income - spending after refunds; savings_rate_pct = net / income.",
    }
    if not currencies:
        out["note"] = "No transactions in this period."
    return Sourced(out, _sources(period, whole)[:MAX_SOURCES])


def _block(cur: str, cell: Cell, months: dict[str, Cell] | None) -> dict[str, Any]:
    block: dict[str, Any] = {"currency": cur, **cell.figures(cur)}
    block["income_count"] = cell.counts[INCOME]
    block["income_by_category"] = [
        {"category": name, "amount": format_minor(v[0], cur), "count": v[1]}
        for name, v in sorted(cell.income.items(), key=lambda kv: (-kv[1][0], kv[0]))
    ]
    block["transfers_excluded"] = {
        "in": format_minor(cell.transfers[0], cur),
        "out": format_minor(cell.transfers[1], cur),
        "count": cell.counts[TRANSFER],
    }
    if months is not None:
        block["months"] = [
            {"month": m, **months[m].figures(cur)} for m in sorted(months)[:MAX_MONTHS]
        ]
    return block


def _sources(period: Period, whole: dict[str, Cell]) -> list[dict[str, Any]]:
    """One search result per figure (its rows: one flow over the period), then income's parts."""
    span = {"start_date": period.start, "end_date": period.end}
    out = []
    for key, kind, title in FIGURES:
        parts = []
        for cur, cell in sorted(whole.items()):
            figure = cell.figures(cur).get(key)
            if key == "transfers":
                n = cell.counts[TRANSFER]
                figure = f"{format_minor(cell.transfers[0], cur)} in, "
                figure += f"{format_minor(cell.transfers[1], cur)} out"
            else:
                n = (
                    cell.counts[kind]
                    if kind != NET_SPENDING
                    else (cell.counts[SPENDING] + cell.counts[REFUND])
                )
            if n:
                parts.append(f"{cur}: {figure} {cur if key != 'transfers' else ''} ({n} rows)")
        if parts:
            text = f"{title}, {period.label}: " + "; ".join(p.replace("  ", " ") for p in parts)
            where = {**span, "flow": kind}
            out.append(search_result(txns_source(where), f"{title} · {period.label}", text + "."))
    named: dict[str, list[str]] = defaultdict(list)
    for cur, cell in sorted(whole.items()):
        for name, (minor, n) in sorted(cell.income.items()):
            named[name].append(f"{format_minor(minor, cur)} {cur} ({n} rows)")
    for name, parts in sorted(named.items()):
        where = {**span, "category": name, "flow": INCOME}
        text = f"Income in {name}, {period.label}: {'; '.join(parts)}."
        out.append(search_result(txns_source(where), f"Income · {name} · {period.label}", text))
    return out

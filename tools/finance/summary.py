"""get_spending_summary and compare_spending: spend grouped and compared between periods."""

from __future__ import annotations

from collections import defaultdict
from datetime import date, timedelta
from typing import Any

from sqlalchemy import ColumnElement

from domain.money import format_minor, percent
from models.finance import Category, Transaction
from tools.finance.cites import spend_result, transaction_result
from tools.finance.clock import days_in_month
from tools.finance.flows import NET_SPENDING
from tools.finance.periods import label, stated
from tools.finance.periods import resolve as resolve_period
from tools.finance.queries import UNCATEGORIZED, check_range, resolve_category, spending_totals
from tools.finance.transactions import rows_matching
from tools.registry import MAX_SOURCES, Sourced, ToolContext

MAX_PERIODS = 60
MAX_COMPARED = 50
# A group this small also lists its rows as search results, up to ROW_SOURCES rows in all:
# each search result costs tokens on every later call of the conversation.
FEW_ROWS = 3
ROW_SOURCES = 6

# [net spent, count, charged, refunded] per key, per currency (minor units).
Groups = dict[str, dict[str, list[int]]]


def get_spending_summary(ctx: ToolContext, data: dict[str, Any]) -> Sourced:
    """Return spend per group and currency over a period.

    Its search results: each listed group whose rows one get_transactions query selects
    exactly (a category; a month or week of one category), then the rows of the small ones.
    """
    group_by = data["group_by"]
    check_range(data.get("start_date"), data.get("end_date"), "start_date", "end_date")
    with ctx.db.read() as s:
        period = resolve_period(s, ctx.user_id, data.get("start_date"), data.get("end_date"))
        start, end = period.start, period.end
        ref = resolve_category(s, ctx.user_id, data["category"]) if data.get("category") else None
        rows = spending_totals(s, ctx.user_id, start, end, _group_key(group_by), ref)
    groups = _collect(rows, group_by)
    by_time = group_by in ("month", "week")
    cap = MAX_PERIODS if by_time else data["top_n"]
    currencies = [
        _currency_block(cur, items, cap, group_by) for cur, items in sorted(groups.items())
    ]
    out: dict[str, Any] = {
        "period": period.stated(),
        "start_date": start.isoformat(),
        "end_date": end.isoformat(),
        "group_by": group_by,
        "category": ref.name if ref else None,
        "currencies": currencies,
    }
    if any(c.get("truncated") for c in currencies):
        out["truncated"] = True
        out["note"] = (
            f"Only the {MAX_PERIODS} earliest periods are listed; narrow the date range."
            if by_time
            else "Only the largest groups are listed; the rest are summed under 'other'."
        )
    where = {"group_by": group_by, "start_date": start, "end_date": end}
    name = ref.name if ref else None
    return Sourced(out, _summary_sources(ctx, where, name, currencies))


def _summary_sources(
    ctx: ToolContext, data: dict[str, Any], category: str | None, blocks: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Return the search results of a summary's listed groups, then the rows of small ones."""
    group_by, start, end = data["group_by"], data["start_date"], data["end_date"]
    if group_by == "merchant":
        return []  # a merchant filter is a substring: its rows are not exactly the group's
    spans: dict[str, tuple[str | None, date, date]] = {}
    spent: dict[str, list[tuple[str, str, int]]] = defaultdict(list)
    for block in blocks:
        for group in block["groups"]:
            key = group["key"]
            name = key if group_by == "category" else category
            spans.setdefault(key, (name, *_span(key, group_by, start, end)))
            spent[key].append((block["currency"], group["spent"], group["count"]))
    out = [spend_result(*spans[key], spent[key]) for key in spans]
    small = [key for key in spans if sum(n for _, _, n in spent[key]) <= FEW_ROWS]
    room = min(MAX_SOURCES, len(out) + ROW_SOURCES)
    with ctx.db.read() as s:
        for key in small:
            if len(out) >= room:
                break
            name, first, last = spans[key]
            where = {"category": name, "start_date": first, "end_date": last}
            where["flow"] = NET_SPENDING
            rows = rows_matching(s, ctx.user_id, where, FEW_ROWS)
            out += [transaction_result(r) for r in rows]
    return out[:room]


def _span(key: str, group_by: str, start: date, end: date) -> tuple[date, date]:
    """Return the days of one group within the summary's period."""
    if group_by == "month":
        year, month = map(int, key.split("-"))
        first = date(year, month, 1)
        last = first.replace(day=days_in_month(year, month))
    elif group_by == "week":
        iso_year, week = key.split("-W")
        first = date.fromisocalendar(int(iso_year), int(week), 1)
        last = first + timedelta(days=6)
    else:
        return start, end
    return max(first, start), min(last, end)


def compare_spending(ctx: ToolContext, data: dict[str, Any]) -> Sourced:
    """Return spend per category and currency for two periods with the change from A to B.

    Its search results: the categories that changed most, each in period B, then in A.
    """
    a_start, a_end = data["period_a_start"], data["period_a_end"]
    b_start, b_end = data["period_b_start"], data["period_b_end"]
    check_range(a_start, a_end, "period_a_start", "period_a_end")
    check_range(b_start, b_end, "period_b_start", "period_b_end")
    with ctx.db.read() as s:
        rows_a = spending_totals(s, ctx.user_id, a_start, a_end, Category.name)
        rows_b = spending_totals(s, ctx.user_id, b_start, b_end, Category.name)
    table: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    counts: dict[tuple[str, str, int], int] = defaultdict(int)
    for index, rows in enumerate((rows_a, rows_b)):
        for name, cur, spent, count, _, _ in rows:
            table[cur][name or UNCATEGORIZED][index] += spent
            counts[(name or UNCATEGORIZED, cur, index)] += count
    currencies = []
    truncated = False
    for cur, cats in sorted(table.items()):
        items = sorted(cats.items(), key=lambda kv: (-abs(kv[1][1] - kv[1][0]), kv[0]))
        total_a, total_b = sum(v[0] for v in cats.values()), sum(v[1] for v in cats.values())
        block = {"currency": cur, **_change(total_a, total_b, cur)}
        block["categories"] = [
            {"category": name, **_change(a, b, cur)} for name, (a, b) in items[:MAX_COMPARED]
        ]
        truncated |= len(items) > MAX_COMPARED
        currencies.append(block)
    out: dict[str, Any] = {
        "period": stated(
            min(a_start, b_start),
            max(a_end, b_end),
            f"{label(b_start, b_end)} against {label(a_start, a_end)}",
        ),
        "period_a": {
            "start_date": a_start.isoformat(),
            "end_date": a_end.isoformat(),
            "label": label(a_start, a_end),
        },
        "period_b": {
            "start_date": b_start.isoformat(),
            "end_date": b_end.isoformat(),
            "label": label(b_start, b_end),
        },
        "currencies": currencies,
    }
    if truncated:
        out["truncated"] = True
        out["note"] = f"Only the {MAX_COMPARED} categories that changed most are listed."
    periods = ((b_start, b_end, "period_b", 1), (a_start, a_end, "period_a", 0))
    sources = []
    for name in dict.fromkeys(c["category"] for b in currencies for c in b["categories"]):
        for first, last, field, index in periods:
            spends = [
                (b["currency"], c[field], counts[(name, b["currency"], index)])
                for b in currencies
                for c in b["categories"]
                if c["category"] == name and counts[(name, b["currency"], index)]
            ]
            if spends:
                sources.append(spend_result(name, first, last, spends))
    return Sourced(out, sources[:MAX_SOURCES])


def _group_key(group_by: str) -> ColumnElement[Any] | Any:
    if group_by == "category":
        return Category.name
    if group_by == "merchant":
        return Transaction.merchant
    # Days are rolled up to months or weeks in Python: portable across SQLite and PostgreSQL.
    return Transaction.posted_on


def _collect(rows: list[tuple[Any, str, int, int, int, int]], group_by: str) -> Groups:
    groups: Groups = defaultdict(lambda: defaultdict(lambda: [0, 0, 0, 0]))
    for key, cur, *figures in rows:
        cell = groups[cur][_label(key, group_by)]
        for index, value in enumerate(figures):
            cell[index] += value
    return groups


def _label(key: date | str | None, group_by: str) -> str:
    if isinstance(key, date):  # grouped by month or week
        if group_by == "week":
            year, week, _ = key.isocalendar()
            return f"{year}-W{week:02d}"
        return key.strftime("%Y-%m")
    return key if key is not None else UNCATEGORIZED


def _currency_block(
    currency: str, items: dict[str, list[int]], cap: int, group_by: str
) -> dict[str, Any]:
    total = sum(v[0] for v in items.values())
    by_time = group_by in ("month", "week")
    ordered = sorted(items.items()) if by_time else sorted(items.items(), key=_largest_first)
    groups = [_group(key, v[0], v[1], total, currency) for key, v in ordered[:cap]]
    if group_by == "week":
        for group in groups:
            year, week = group["key"].split("-W")
            group["week_start"] = date.fromisocalendar(int(year), int(week), 1).isoformat()
    block: dict[str, Any] = {
        "currency": currency,
        "total_spent": format_minor(total, currency),
        "spent_before_refunds": format_minor(sum(v[2] for v in items.values()), currency),
        "refunds": format_minor(sum(v[3] for v in items.values()), currency),
        "count": sum(v[1] for v in items.values()),
        "groups": groups,
    }
    rest = ordered[cap:]
    if rest:
        block["truncated"] = True
    if rest and not by_time:
        spent, n = sum(v[0] for _, v in rest), sum(v[1] for _, v in rest)
        other = _group("other", spent, n, total, currency)
        block["other"] = {
            "groups": len(rest),
            "spent": other["spent"],
            "count": n,
            "share_pct": other["share_pct"],
        }
    return block


def _largest_first(item: tuple[str, list[int]]) -> tuple[int, str]:
    return -item[1][0], item[0]


def _group(key: str, spent: int, count: int, total: int, currency: str) -> dict[str, Any]:
    share = percent(spent, total) if total > 0 else None
    return {"key": key, "spent": format_minor(spent, currency), "count": count, "share_pct": share}


def _change(a: int, b: int, currency: str) -> dict[str, Any]:
    return {
        "period_a": format_minor(a, currency),
        "period_b": format_minor(b, currency),
        "change": format_minor(b - a, currency),
        # A refund-heavy baseline can be negative; a percentage of it would mislead.
        "change_pct": percent(b - a, a) if a > 0 else None,
    }

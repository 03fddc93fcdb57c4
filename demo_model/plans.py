"""Which finance tools the demo model calls for a question, round by round."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

Call = tuple[str, dict[str, Any]]
Results = list[tuple[str, dict[str, Any], Any]]  # (tool name, input, parsed result or error)
Step = Callable[[Results], list[Call]]

CATEGORY_WORDS = {
    "grocer": "groceries",
    "supermarket": "groceries",
    "food shop": "groceries",
    "restaurant": "restaurants",
    "dining": "restaurants",
    "eating out": "restaurants",
    "takeaway": "restaurants",
    "transport": "transport",
    "uber": "transport",
    "travel": "travel",
    "flight": "travel",
    "hotel": "travel",
    "utilit": "utilities",
    "electric": "utilities",
    "subscription": "subscriptions",
    "rent": "rent",
    "entertainment": "entertainment",
    "shopping": "shopping",
    "health": "health",
}


@dataclass(frozen=True)
class Period:
    """An inclusive date range with a human label."""

    start: date
    end: date
    label: str


@dataclass(frozen=True)
class Plan:
    """The tool rounds for one question and the kind of answer to write."""

    kind: str
    steps: list[Step]
    period: Period
    category: str | None = None


def month_period(today: date, back: int) -> Period:
    """Return the calendar month `back` months before today's."""
    year, month = today.year, today.month - back
    while month < 1:
        year, month = year - 1, month + 12
    start = date(year, month, 1)
    nxt = date(year + (month == 12), month % 12 + 1, 1)
    end = min(nxt - timedelta(days=1), today)
    return Period(start, end, start.strftime("%B %Y"))


def parse_period(question: str, today: date) -> Period:
    """Read 'this month', 'last month', 'this year' or 'last N days' from the question."""
    q = question.lower()
    if "last month" in q or "previous month" in q:
        return month_period(today, 1)
    if "this year" in q:
        return Period(date(today.year, 1, 1), today, f"{today.year} so far")
    if "last year" in q:
        return Period(date(today.year - 1, 1, 1), date(today.year - 1, 12, 31), str(today.year - 1))
    days = re.search(r"last (\d{1,3}) days", q)
    if days:
        n = int(days.group(1))
        return Period(today - timedelta(days=n - 1), today, f"the last {n} days")
    return month_period(today, 0)


def category_word(question: str) -> str | None:
    """Return the category a question is about, if it names one."""
    q = question.lower()
    return next((cat for word, cat in CATEGORY_WORDS.items() if word in q), None)


def make_plan(question: str, today: date) -> Plan:
    """Choose the tool rounds that answer `question`."""
    q = question.lower()
    period = parse_period(question, today)
    span = {"start_date": period.start.isoformat(), "end_date": period.end.isoformat()}
    if "budget" in q:
        month = period.start.strftime("%Y-%m")
        return Plan("budget", [lambda _: [("get_budget_status", {"month": month})]], period)
    if "compare" in q or " vs" in q or "than last month" in q:
        base = month_period(today, 1)
        cmp = {
            "period_a_start": base.start.isoformat(),
            "period_a_end": base.end.isoformat(),
            "period_b_start": date(today.year, today.month, 1).isoformat(),
            "period_b_end": today.isoformat(),
        }
        return Plan("compare", [lambda _: [("compare_spending", cmp)]], period)
    if "subscription" in q or "recurring" in q:
        return Plan("recurring", [lambda _: [("find_recurring_payments", {})]], period)
    if "balance" in q or "account" in q or "how much money" in q:
        return Plan("balances", [lambda _: [("get_account_balances", {})]], period)
    category = category_word(question)
    if category:
        summary = {**span, "group_by": "category", "top_n": 20}
        return Plan(
            "category",
            [
                lambda _: [("get_spending_summary", summary)],
                lambda results: _top_transactions(results, span, category),
            ],
            period,
            category,
        )
    overview = {**span, "group_by": "category", "top_n": 5}
    return Plan(
        "overview",
        [lambda _: [("get_account_balances", {}), ("get_spending_summary", overview)]],
        period,
    )


def _top_transactions(results: Results, span: dict[str, str], category: str) -> list[Call]:
    name = matching_group(results, category)
    if name is None:
        return []
    return [
        (
            "get_transactions",
            {**span, "category": name, "direction": "out", "sort": "amount_desc", "limit": 5},
        )
    ]


def matching_group(results: Results, category: str) -> str | None:
    """Return the summary group whose name matches `category`, if the summary has one."""
    for name, _, result in results:
        if name == "get_spending_summary" and isinstance(result, dict):
            for group in groups_of(result):
                label = str(group.get("key") or group.get("name") or group.get("category") or "")
                if category[:5] in label.lower():
                    return label
    return None


def groups_of(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Return a summary's group rows whatever key the tool used for them."""
    for key in ("groups", "rows", "items", "categories"):
        if isinstance(result.get(key), list):
            return [g for g in result[key] if isinstance(g, dict)]
    per_currency = result.get("currencies") or result.get("by_currency")
    if isinstance(per_currency, list):
        return [g for c in per_currency if isinstance(c, dict) for g in groups_of(c)]
    return []

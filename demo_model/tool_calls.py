"""The tool calls the demo model makes, built one way so planning and answering agree on them."""

from __future__ import annotations

from typing import Any

from demo_model.periods import Period

Call = tuple[str, dict[str, Any]]
Results = list[tuple[str, dict[str, Any], Any]]  # (tool name, input, parsed result or error)

ALL_GROUPS = 50  # the tool's top_n maximum: every category or merchant, nothing summed as other
REFUNDS_LISTED = 20
INCOME_LISTED = 10  # payments in an income answer lists: each category's first ones are cited
INFLOWS = 200  # get_transactions' page maximum
LARGEST_POOL = 50  # payments out, largest first: transfers among them are left out


def result_of(results: Results, call: Call) -> Any:
    """Return the result of exactly this call, or None if it was not made."""
    name, args = call
    for done, done_args, result in reversed(results):
        if done == name and done_args == args:
            return result
    return None


def missing(results: Results, calls: list[Call]) -> list[Call]:
    """Return the calls among `calls` that have no result yet."""
    return [c for c in calls if result_of(results, c) is None]


def by_category(period: Period) -> Call:
    """Spend per category: the user's category names and each one's share."""
    return "get_spending_summary", {**period.span(), "group_by": "category", "top_n": ALL_GROUPS}


def by_merchant(period: Period) -> Call:
    """Spend per merchant: the names a merchant question can match."""
    return "get_spending_summary", {**period.span(), "group_by": "merchant", "top_n": ALL_GROUPS}


def rows(period: Period, where: dict[str, str]) -> Call:
    """A subject's transactions, largest first, with money out and in totalled per currency."""
    return "get_transactions", {**period.span(), **where, "sort": "amount_desc", "limit": 5}


def refunds(period: Period, where: dict[str, str]) -> Call:
    """A subject's money coming back (refunds), oldest first."""
    args = {**period.span(), **where, "direction": "in", "sort": "date_asc"}
    return "get_transactions", {**args, "limit": REFUNDS_LISTED}


def totals(period: Period, where: dict[str, str]) -> Call:
    """Only the per-currency totals of a subject's transactions (one row is the minimum page)."""
    return "get_transactions", {**period.span(), **where, "limit": 1}


def charges(period: Period, where: dict[str, str]) -> Call:
    """Only the per-currency totals of a subject's money out: what was charged before refunds."""
    return "get_transactions", {**period.span(), **where, "direction": "out", "limit": 1}


def refunded(period: Period, where: dict[str, str]) -> Call:
    """Only the per-currency totals of a subject's money coming back (refunds)."""
    return "get_transactions", {**period.span(), **where, "direction": "in", "limit": 1}


def inflows(period: Period) -> Call:
    """Every incoming transaction of a period: refunds are those in spending categories."""
    return "get_transactions", {
        **period.span(),
        "direction": "in",
        "sort": "date_asc",
        "limit": INFLOWS,
    }


def money_in(period: Period, where: dict[str, str]) -> Call:
    """A category's money coming in, oldest first, with per-currency totals over every row."""
    args = {**period.span(), **where, "direction": "in", "sort": "date_asc"}
    return "get_transactions", {**args, "limit": INCOME_LISTED}


def largest(period: Period, where: dict[str, str]) -> Call:
    """The biggest payments out of a period; without a subject, enough to skip transfers."""
    args = {**period.span(), **where, "direction": "out", "sort": "amount_desc"}
    return "get_transactions", {**args, "limit": 5 if where else LARGEST_POOL}


def compare(period: Period, baseline: Period) -> Call:
    """Spend per category and currency in the baseline (A) and the asked period (B)."""
    return "compare_spending", {
        "period_a_start": baseline.start.isoformat(),
        "period_a_end": baseline.end.isoformat(),
        "period_b_start": period.start.isoformat(),
        "period_b_end": period.end.isoformat(),
    }


def budget(period: Period) -> Call:
    """Budget status of the month the period ends in (budgets are monthly)."""
    when = period.start if period.unit == "month" else period.end
    return "get_budget_status", {"month": when.strftime("%Y-%m")}


def balances() -> Call:
    """Every account with its balance."""
    return "get_account_balances", {}


def recurring() -> Call:
    """Recurring payments over the last year."""
    return "find_recurring_payments", {}


def any_data() -> list[Call]:
    """Whether the user has any accounts or transactions at all, when a period came up empty."""
    return [("get_transactions", {"limit": 1}), balances()]


def chart(kind: str, period: Period, category: str | None = None) -> Call:
    """A chart of the user's rows: spending by month or category, or income against spending."""
    args: dict[str, Any] = {"kind": kind, **period.span()}
    if category:
        args["category"] = category
    return "chart", args


PENDING_LISTED = 20


def pending() -> Call:
    """The transactions not yet posted, newest first, with their totals per currency."""
    return "get_transactions", {"pending": True, "sort": "date_desc", "limit": PENDING_LISTED}


TOP_MERCHANTS = 3


def by_month(period: Period, category: str) -> Call:
    """One category's spend per month of a period."""
    args = {**period.span(), "group_by": "month", "top_n": ALL_GROUPS, "category": category}
    return "get_spending_summary", args

"""The tool calls the demo model makes, built one way so planning and answering agree on them."""

from __future__ import annotations

from typing import Any

from demo_model.periods import Period
from tools.finance.cites import series_title

Call = tuple[str, dict[str, Any]]
Results = list[tuple[str, dict[str, Any], Any]]  # (tool name, input, parsed result or error)

ALL_GROUPS = 50  # the tool's top_n maximum: every category or merchant, nothing summed as other
REFUNDS_LISTED = 20
INCOME_LISTED = 10  # payments in an income answer lists: each category's first ones are cited


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


# The flows of the one money rule (tools/finance/flows.py), as get_transactions filters them.
NET_SPENDING = {"flow": "net_spending"}


def rows(period: Period, where: dict[str, str]) -> Call:
    """A subject's spending rows, largest first, with charged and refunded totalled per
    currency (money out, money in): transfers and income at the same merchant left out."""
    args = {**period.span(), **where, **NET_SPENDING, "sort": "amount_desc"}
    return "get_transactions", {**args, "limit": 5}


def refunds(period: Period, where: dict[str, str]) -> Call:
    """A subject's refunds (money back for spending, by the money rule), oldest first."""
    args = {**period.span(), **where, "flow": "refund", "sort": "date_asc"}
    return "get_transactions", {**args, "limit": REFUNDS_LISTED}


def totals(period: Period, where: dict[str, str]) -> Call:
    """Only the per-currency totals of a subject's spending and refunds (one row, the least)."""
    return "get_transactions", {**period.span(), **where, **NET_SPENDING, "limit": 1}


def charges(period: Period, where: dict[str, str]) -> Call:
    """Only the per-currency totals of a subject's spending before refunds."""
    return "get_transactions", {**period.span(), **where, "flow": "spending", "limit": 1}


def refunded(period: Period, where: dict[str, str]) -> Call:
    """Only the per-currency totals of a subject's refunds."""
    return "get_transactions", {**period.span(), **where, "flow": "refund", "limit": 1}


def income_rows(period: Period) -> Call:
    """The payments in that are income by the money rule, oldest first, totals over all."""
    args = {**period.span(), "flow": "income", "sort": "date_asc"}
    return "get_transactions", {**args, "limit": INCOME_LISTED}


def cash_flow(period: Period) -> Call:
    """Money in (income) against money out (spending before and after refunds), per currency."""
    return "get_cash_flow", period.span()


def first_row() -> Call:
    """The user's first transaction: where all of their history starts."""
    return "get_transactions", {"sort": "date_asc", "limit": 1}


def largest(period: Period, where: dict[str, str]) -> Call:
    """The biggest payments out that are spending (transfers between accounts are not)."""
    args = {**period.span(), **where, "flow": "spending", "sort": "amount_desc"}
    return "get_transactions", {**args, "limit": 5}


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


def recurring(**filters: str) -> Call:
    """The recurring series (money out and in), optionally of one category or direction."""
    return "find_recurring_payments", dict(filters)


def forecast(day: str) -> Call:
    """Each account's balance projected to a day ahead, from the recurring series."""
    return "forecast_balance", {"date": day}


def upcoming(days: int) -> Call:
    """The recurring payments expected in the next `days` days."""
    return "get_upcoming_bills", {"days": days}


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


def by_month(period: Period, category: str | None = None) -> Call:
    """Spend per month of a period (of one category, or all)."""
    args: dict[str, Any] = {**period.span(), "group_by": "month", "top_n": ALL_GROUPS}
    if category:
        args["category"] = category
    return "get_spending_summary", args


def series_source(item: dict[str, Any]) -> str:
    """Return how a recurring series the tools listed is cited: by its search result's title
    (its rows, by id, are that result's source)."""
    return series_title(
        item["name"], item["cadence"], item["next_expected_amount"], item["currency"]
    )


TRANSFERS_LISTED = 10


def transfers(period: Period, where: dict[str, str], direction: str) -> Call:
    """Money moved between the user's own accounts, out of or into them, newest first."""
    args = {**period.span(), **where, "flow": "transfer", "direction": direction}
    return "get_transactions", {**args, "sort": "date_desc", "limit": TRANSFERS_LISTED}

"""Invalid input comes back as an is_error result that names the field and the fix."""

from __future__ import annotations

from typing import Any

import pytest

from tests.tools.conftest import Caller

SCHEMA_ERRORS = [
    ("get_transactions", {"start_date": "2025-13-01"}, "start_date", "YYYY-MM-DD"),
    ("get_transactions", {"end_date": "2025-02-30"}, "end_date", "YYYY-MM-DD"),
    ("get_transactions", {"start_date": "20250101"}, "start_date", "YYYY-MM-DD"),
    ("get_transactions", {"start_date": "yesterday"}, "start_date", "YYYY-MM-DD"),
    ("get_transactions", {"limit": 0}, "limit", "greater than or equal to 1"),
    ("get_transactions", {"limit": 201}, "limit", "less than or equal to 200"),
    ("get_transactions", {"limit": "50"}, "limit", "integer"),
    ("get_transactions", {"limit": True}, "limit", "integer"),
    ("get_transactions", {"sort": "newest"}, "sort", "date_desc"),
    ("get_transactions", {"min_amount": "-5"}, "min_amount", "decimal string"),
    ("get_transactions", {"min_amount": 5.5}, "min_amount", "decimal string"),
    ("get_transactions", {"max_amount": "1e3"}, "max_amount", "decimal string"),
    ("get_transactions", {"pending": "yes"}, "pending", "boolean"),
    ("get_transactions", {"direction": "both"}, "direction", "out"),
    ("get_transactions", {"category": ""}, "category", "Length"),
    ("get_transactions", {"cursor": ""}, "cursor", "Length"),
    ("get_transactions", {"flow": "refunds"}, "flow", "net_spending"),
    ("get_transactions", {"ids": "1, 2"}, "ids", "separated by commas"),
    ("forecast_balance", {}, "date", "Missing data"),
    ("forecast_balance", {"date": "2025-13-01"}, "date", "YYYY-MM-DD"),
    ("get_upcoming_bills", {"days": 367}, "days", "366"),
    ("get_cash_flow", {"group_by": "week"}, "group_by", "month"),
    (
        "get_spending_summary",
        {**{"start_date": "2025-01-01", "end_date": "2025-01-31"}, "group_by": "day"},
        "group_by",
        "week",
    ),
    (
        "get_spending_summary",
        {**{"start_date": "2025-01-01", "end_date": "2025-01-31"}, "top_n": 51},
        "top_n",
        "50",
    ),
    ("get_budget_status", {"month": "2025-13"}, "month", "YYYY-MM"),
    ("get_budget_status", {"month": "March"}, "month", "YYYY-MM"),
    ("get_budget_status", {"month": "2025-03\n"}, "month", "YYYY-MM"),
    ("get_account_balances", {"verbose": True}, "verbose", "Unknown field"),
    ("compare_spending", {"period_a_start": "2025-01-01"}, "period_b_end", "Missing data"),
    ("find_recurring_payments", {"min_occurrences": 1}, "min_occurrences", "2"),
    ("find_recurring_payments", {"lookback_months": 37}, "lookback_months", "36"),
    ("find_recurring_payments", {"amount_tolerance_pct": -1}, "amount_tolerance_pct", "0"),
]


@pytest.mark.parametrize(("tool", "tool_input", "field", "hint"), SCHEMA_ERRORS)
def test_schema_errors_name_the_field(
    call: Caller, tool: str, tool_input: dict[str, Any], field: str, hint: str
) -> None:
    error = call.error(tool, **tool_input)
    assert error.startswith("Invalid tool input. Fix these fields and call the tool again:")
    assert f"'{field}':" in error
    assert hint in error


HANDLER_ERRORS = [
    (
        "get_transactions",
        {"start_date": "2025-02-01", "end_date": "2025-01-01"},
        "end_date",
        "end_date 2025-01-01 is before start_date 2025-02-01",
    ),
    (
        "get_transactions",
        {"category": "Pets"},
        "category",
        "unknown category 'Pets'. Use one of: Groceries, Rent, Restaurants, Salary, "
        "Subscriptions, Transfers, Travel, Uncategorized.",
    ),
    (
        "get_transactions",
        {"account": "Amex"},
        "account",
        "unknown account 'Amex'. Use one of: Checking, Euro Card, Visa.",
    ),
    (
        "get_transactions",
        {"cursor": "not-a-cursor"},
        "cursor",
        "not a cursor returned by get_transactions",
    ),
    ("get_transactions", {"cursor": "eyJmIjoxfQ"}, "cursor", "without cursor"),
    (
        "get_spending_summary",
        {"start_date": "2025-03-01", "end_date": "2025-02-01"},
        "end_date",
        "on or after start_date",
    ),
    (
        "get_spending_summary",
        {"start_date": "2025-01-01", "end_date": "2025-02-01", "category": "Pets"},
        "category",
        "Use one of:",
    ),
    (
        "compare_spending",
        {
            "period_a_start": "2025-01-01",
            "period_a_end": "2025-01-31",
            "period_b_start": "2025-03-01",
            "period_b_end": "2025-02-01",
        },
        "period_b_end",
        "before period_b_start",
    ),
    ("forecast_balance", {"date": "2025-03-14"}, "date", "from today (2025-03-15)"),
    ("forecast_balance", {"date": "2027-03-16"}, "date", "730 days ahead"),
    ("forecast_balance", {"date": "2025-04-01", "account": "Amex"}, "account", "Use one of:"),
    ("chart", {"kind": "balance_forecast", "end_date": "2025-03-15"}, "end_date", "after today"),
    (
        "chart",
        {"kind": "balance_forecast", "start_date": "2025-03-15"},
        "start_date",
        "a day before today",
    ),
    (
        "compare_spending",
        {
            "period_a_start": "2025-01-31",
            "period_a_end": "2025-01-01",
            "period_b_start": "2025-02-01",
            "period_b_end": "2025-02-28",
        },
        "period_a_end",
        "before period_a_start",
    ),
]


@pytest.mark.parametrize(("tool", "tool_input", "field", "hint"), HANDLER_ERRORS)
def test_handler_errors_name_the_field_and_the_fix(
    call: Caller, tool: str, tool_input: dict[str, Any], field: str, hint: str
) -> None:
    error = call.error(tool, **tool_input)
    assert error.startswith(f"Invalid input for field '{field}': ")
    assert hint in error


def test_cursor_of_another_query_is_refused(call: Caller) -> None:
    page = call("get_transactions", limit=2)
    for other in ({"limit": 2, "category": "groceries"}, {"limit": 2, "sort": "amount_desc"}):
        error = call.error("get_transactions", cursor=page["next_cursor"], **other)
        assert "Invalid input for field 'cursor'" in error
        assert "same filters and sort" in error
    # The page size may change between pages.
    assert call("get_transactions", limit=5, cursor=page["next_cursor"])["returned"] == 5


def test_tampered_cursor_is_refused(call: Caller) -> None:
    import base64
    import json

    page = call("get_transactions", limit=2, sort="amount_desc")
    payload = json.loads(base64.urlsafe_b64decode(page["next_cursor"] + "=="))
    payload["k"][0] = "2025-01-01"  # a date where the amount sort expects an integer
    forged = base64.urlsafe_b64encode(json.dumps(payload).encode()).decode()
    error = call.error("get_transactions", limit=2, sort="amount_desc", cursor=forged)
    assert "not a cursor returned by get_transactions" in error

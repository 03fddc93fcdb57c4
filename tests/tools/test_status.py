"""get_account_balances and get_budget_status on the hand-built ledger."""

from __future__ import annotations

from datetime import date

from models.db import Database
from tests.conftest import make_user
from tests.tools.conftest import Caller
from tools.finance.clock import pinned_today


def test_account_balances(call: Caller) -> None:
    result = call("get_account_balances")
    assert result["accounts"] == [
        {"name": "Checking", "kind": "checking", "currency": "USD", "balance": "1000.00"},
        {"name": "Euro Card", "kind": "credit_card", "currency": "EUR", "balance": "-80.00"},
        {"name": "Visa", "kind": "credit_card", "currency": "USD", "balance": "-250.75"},
    ]
    assert result["totals"] == [
        {"currency": "EUR", "balance": "-80.00", "accounts": 1},
        {"currency": "USD", "balance": "749.25", "accounts": 2},
    ]
    assert "owed" in result["note"]
    assert "truncated" not in result


def budget(
    name: str, kind: str, limit: str, spent: str, remaining: str, pct: str | None, status: str
) -> dict[str, object]:
    return {
        "category": name,
        "budget_type": kind,
        "currency": "USD",
        "limit": limit,
        "spent": spent,
        "remaining": remaining,
        "percent_used": pct,
        "status": status,
    }


def test_current_month_uses_override_and_shows_over_at_under(call: Caller) -> None:
    result = call("get_budget_status")
    assert result["month"] == "2025-03"
    assert result["days_in_month"] == 31
    assert result["days_elapsed"] == 15
    restaurants = budget("Restaurants", "recurring", "100.00", "25.99", "74.01", "26.0", "under")
    restaurants["not_counted_other_currencies"] = [{"spent": "35.00", "currency": "EUR"}]
    assert result["budgets"] == [
        budget("Groceries", "this_month", "150.00", "146.20", "3.80", "97.5", "under"),
        budget("Rent", "recurring", "1500.00", "1500.00", "0.00", "100.0", "at"),
        restaurants,
        budget("Subscriptions", "recurring", "10.00", "15.49", "-5.49", "154.9", "over"),
    ]
    assert result["totals"] == [
        {
            "currency": "USD",
            "limit": "1760.00",
            "spent": "1687.68",
            "remaining": "72.32",
            "percent_used": "95.9",
        }
    ]


def test_past_month_falls_back_to_recurring_budget(call: Caller) -> None:
    result = call("get_budget_status", month="2025-02")
    assert result["days_elapsed"] == 28
    groceries, rent, restaurants, subscriptions = result["budgets"]
    assert groceries == budget(
        "Groceries", "recurring", "200.00", "91.20", "108.80", "45.6", "under"
    )
    assert restaurants["spent"] == "78.00"
    assert restaurants["not_counted_other_currencies"] == [{"spent": "45.00", "currency": "EUR"}]
    assert rent["status"] == "at"
    assert subscriptions["status"] == "over"


def test_refund_reduces_budget_spend(call: Caller) -> None:
    groceries = call("get_budget_status", month="2025-01")["budgets"][0]
    assert groceries == budget(
        "Groceries", "recurring", "200.00", "107.55", "92.45", "53.8", "under"
    )


def test_month_without_spending_and_future_month(call: Caller) -> None:
    result = call("get_budget_status", month="2025-06")
    assert result["days_elapsed"] == 0
    assert [(b["category"], b["spent"], b["status"]) for b in result["budgets"]] == [
        ("Groceries", "0.00", "under"),
        ("Rent", "0.00", "under"),
        ("Restaurants", "0.00", "under"),
        ("Subscriptions", "0.00", "under"),
    ]


def test_default_month_follows_the_pinned_today(call: Caller) -> None:
    with pinned_today(date(2025, 2, 10)):
        result = call("get_budget_status")
    assert result["month"] == "2025-02"
    assert result["days_elapsed"] == 10
    assert result["budgets"][0]["budget_type"] == "recurring"


def test_no_budgets(call: Caller, db: Database) -> None:
    carol = make_user(db, "carol")[0]
    result = call.as_user(carol)("get_budget_status")
    assert result["budgets"] == []
    assert result["totals"] == []
    assert result["note"] == "No budgets are set for this month."

"""Every list result is capped, and says so with "truncated" and a note."""

from __future__ import annotations

import pytest

from tests.tools.conftest import Caller
from tools.finance import recurring, status, summary, transactions

Q1 = {"start_date": "2025-01-01", "end_date": "2025-03-31"}


def test_periods_are_capped(call: Caller, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(summary, "MAX_PERIODS", 2)
    result = call("get_spending_summary", group_by="month", **Q1)
    usd = result["currencies"][1]
    assert [g["key"] for g in usd["groups"]] == ["2025-01", "2025-02"]
    assert usd["total_spent"] == "5051.40"  # the total still covers every period
    assert usd["truncated"] is True
    assert result["truncated"] is True
    assert "narrow the date range" in result["note"]


def test_compared_categories_are_capped(call: Caller, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(summary, "MAX_COMPARED", 2)
    result = call(
        "compare_spending",
        period_a_start="2025-01-01",
        period_a_end="2025-01-31",
        period_b_start="2025-02-01",
        period_b_end="2025-02-28",
    )
    usd = result["currencies"][1]
    assert [c["category"] for c in usd["categories"]] == ["Restaurants", "Uncategorized"]
    assert usd["period_b"] == "1704.68"
    assert result["truncated"] is True
    assert "2 categories" in result["note"]


def test_recurring_list_is_capped(call: Caller, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(recurring, "MAX_LISTED", 1)
    result = call("find_recurring_payments")
    assert [r["merchant"] for r in result["recurring"]] == ["Landlord LLC"]
    assert result["count"] == 2
    assert result["truncated"] is True
    assert result["estimated_monthly_total"] == [{"currency": "USD", "amount": "1515.49"}]


def test_accounts_and_budgets_are_capped(call: Caller, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(status, "MAX_ACCOUNTS", 2)
    monkeypatch.setattr(status, "MAX_BUDGETS", 1)
    balances = call("get_account_balances")
    assert len(balances["accounts"]) == 2
    assert balances["truncated"] is True
    assert "first 2 accounts" in balances["note"]
    budgets = call("get_budget_status")
    assert [b["category"] for b in budgets["budgets"]] == ["Groceries"]
    assert budgets["totals"][0]["limit"] == "1760.00"
    assert budgets["truncated"] is True
    assert "totals cover all" in budgets["note"]


def test_transaction_pages_shrink_to_fit_the_size_budget(
    call: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(transactions, "MAX_PAGE_CHARS", 700)
    seen: list[int] = []
    cursor: dict[str, str] = {}
    while True:
        page = call("get_transactions", limit=200, **cursor)
        assert 1 <= page["returned"] < 5
        seen += [t["id"] for t in page["transactions"]]
        if not page["has_more"]:
            break
        assert page["truncated"] is True
        cursor = {"cursor": page["next_cursor"]}
    assert sorted(seen) == list(range(1, 22))
    assert len(seen) == 21

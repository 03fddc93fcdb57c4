"""forecast_balance, get_upcoming_bills, get_cash_flow and the balance_forecast chart, on the
hand-built ledger (today 2025-03-15), each figure worked out here by hand."""

from __future__ import annotations

from decimal import Decimal

from models.db import Database
from tests.tools.conftest import Caller
from tools.finance.sources import resolve


def test_a_forecast_adds_pending_rows_and_the_series_to_todays_balances(call: Caller) -> None:
    result = call("forecast_balance", date="2025-04-30")
    assert result["period"] == {
        "from": "2025-03-15",
        "to": "2025-04-30",
        "label": "today (2025-03-15) to 2025-04-30",
    }
    accounts = {a["name"]: a for a in result["accounts"]}
    # Checking: 1000.00, less the rent of April 1st.
    assert accounts["Checking"]["projected_balance"] == "-500.00"
    assert accounts["Checking"]["recurring_out"] == "-1500.00"
    # Visa: -250.75, less the pending 25.99 and 82.45, less Netflix on April 5th.
    assert accounts["Visa"]["pending"] == "-108.44"
    assert accounts["Visa"]["projected_balance"] == "-374.68"
    (netflix,) = accounts["Visa"]["series"]
    assert (netflix["name"], netflix["dates"], netflix["total"]) == (
        "Netflix",
        ["2025-04-05"],
        "-15.49",
    )
    # Two EUR restaurant visits are no series: the Euro Card stays where it is.
    assert accounts["Euro Card"]["projected_balance"] == "-80.00"
    assert result["totals"] == [
        {
            "currency": "EUR",
            "balance_today": "-80.00",
            "projected_balance": "-80.00",
            "accounts": 1,
        },
        {
            "currency": "USD",
            "balance_today": "749.25",
            "projected_balance": "-874.68",
            "accounts": 2,
        },
    ]
    assert [s["name"] for s in result["series_used"]] == ["Landlord LLC", "Netflix"]


def test_a_forecast_cites_the_accounts_the_series_and_the_pending_rows(
    call: Caller, db: Database
) -> None:
    outcome = call.outcome("forecast_balance", date="2025-04-30", account="visa")
    sources = [b["source"] for b in outcome.sources]
    # The account, its pending rows, then the series (the largest first).
    assert sources[0].startswith("account:")
    assert sources[1:] == ["txn:20", "txn:21", "txns:ids=2%2C9%2C17"]  # Netflix's three charges
    netflix = resolve(db, call.user_id, "txns:ids=2%2C9%2C17") or []
    assert sum(Decimal(r["amount"]) for r in netflix) == Decimal("-46.47")


def test_a_longer_forecast_counts_each_occurrence_and_budgets_when_asked(call: Caller) -> None:
    result = call("forecast_balance", date="2025-06-10", include_budgets=True)
    checking = next(a for a in result["accounts"] if a["name"] == "Checking")
    (rent,) = checking["series"]
    assert rent["dates"] == ["2025-04-01", "2025-05-01", "2025-06-01"]
    assert checking["projected_balance"] == "-3500.00"
    (usd,) = result["budgets"]
    assert usd["currency"] == "USD"
    # Budgets allow more spending still; the rent is a series, so its budget is not counted
    # twice: the projection with budgets is lower, by exactly the allowance.
    allowed = Decimal(usd["budgeted_spending"])
    assert allowed > 0
    total = next(t for t in result["totals"] if t["currency"] == "USD")
    projected = Decimal(total["projected_balance"]) - allowed
    assert Decimal(usd["projected_balance_with_budgets"]) == projected


def test_upcoming_bills_list_the_next_thirty_days(call: Caller) -> None:
    result = call("get_upcoming_bills")
    assert result["period"] == {
        "from": "2025-03-15",
        "to": "2025-04-13",
        "label": "the next 30 days",
    }
    assert [(b["date"], b["name"], b["amount"]) for b in result["bills"]] == [
        ("2025-04-01", "Landlord LLC", "1500.00"),
        ("2025-04-05", "Netflix", "15.49"),
    ]
    assert result["totals"] == [{"currency": "USD", "direction": "out", "amount": "1515.49"}]
    assert call("get_upcoming_bills", days=10)["bills"] == []


def test_cash_flow_counts_income_spending_refunds_and_keeps_transfers_apart(call: Caller) -> None:
    result = call("get_cash_flow", start_date="2025-02-01", end_date="2025-02-28")
    (eur, usd) = result["currencies"]
    # February, USD: salary 4000.00 in; rent 1500 + groceries 91.20 + restaurants 78.00 +
    # Netflix 15.49 + the uncategorized 19.99 out; the 500.00 to savings is a transfer.
    assert {k: usd[k] for k in ("income", "spending_before_refunds", "refunds", "spending")} == {
        "income": "4000.00",
        "spending_before_refunds": "1704.68",
        "refunds": "0.00",
        "spending": "1704.68",
    }
    assert usd["net"] == "2295.32" and usd["savings_rate_pct"] == "57.4"
    assert usd["transfers_excluded"] == {"in": "0.00", "out": "-500.00", "count": 1}
    assert usd["income_by_category"] == [{"category": "Salary", "amount": "4000.00", "count": 1}]
    assert eur["income"] == "0.00" and eur["spending"] == "45.00"
    assert eur["savings_rate_pct"] is None


def test_cash_flow_by_month_and_its_sources_add_up(call: Caller, db: Database) -> None:
    args = {"start_date": "2025-01-01", "end_date": "2025-01-31"}
    result = call("get_cash_flow", group_by="month", **args)
    (usd,) = result["currencies"]
    # January: the Whole Foods refund of 20.00 comes off 1679.04 spent.
    assert usd["refunds"] == "20.00" and usd["spending"] == "1659.04"
    assert [m["month"] for m in usd["months"]] == ["2025-01"]
    by_title = {b["title"]: b["source"] for b in call.outcome("get_cash_flow", **args).sources}
    spending = resolve(db, call.user_id, by_title["Spending after refunds · January 2025"]) or []
    assert -sum(Decimal(r["amount"]) for r in spending) == Decimal("1659.04")
    income = resolve(db, call.user_id, by_title["Income · January 2025"]) or []
    assert [r["merchant"] for r in income] == ["Acme Payroll"]


def test_the_balance_forecast_chart_draws_actual_then_projected(call: Caller) -> None:
    result = call("chart", kind="balance_forecast", account="Checking", end_date="2025-04-30")
    (spec,) = result["charts"]
    values = spec["data"]["values"]
    actual = [(v["x"], v["amount"]) for v in values if not v["projected"]]
    projected = [(v["x"], v["amount"]) for v in values if v["projected"]]
    # Today's 1000.00 less what posted after each day: the March rent, February's salary...
    assert actual[-1] == ("2025-03-15", "1000.00")
    assert actual[-2] == ("2025-02-28", "2500.00")
    # The projection starts where the record ends (the joining row), then the April rent.
    assert projected == [
        ("2025-03-15", "1000.00"),
        ("2025-04-01", "-500.00"),
        ("2025-04-30", "-500.00"),
    ]
    assert spec["layer"][0]["encoding"]["strokeDash"]["field"] == "projected"
    assert spec["totals"] == {"Balance": "1000.00", "Projected": "-500.00"}
    assert result["series_used"][0]["name"] == "Landlord LLC"


READ_CALLS = [
    ("get_transactions", {}),
    ("get_spending_summary", {}),
    ("get_cash_flow", {}),
    ("get_account_balances", {}),
    ("get_budget_status", {}),
    ("compare_spending", {"period_a_start": "2025-01-01", "period_a_end": "2025-01-31",
                          "period_b_start": "2025-02-01", "period_b_end": "2025-02-28"}),
    ("find_recurring_payments", {}),
    ("forecast_balance", {"date": "2025-04-30"}),
    ("get_upcoming_bills", {}),
    ("chart", {"kind": "spending_by_month"}),
    ("chart", {"kind": "category_share"}),
    ("chart", {"kind": "budget_progress", "category": "Groceries"}),
    ("chart", {"kind": "account_balance", "account": "Checking"}),
    ("chart", {"kind": "balance_forecast"}),
]  # fmt: skip


def test_every_read_tool_states_its_period(call: Caller) -> None:
    from tools.finance import FINANCE_TOOLS

    reads = {t.name for t in FINANCE_TOOLS if not t.side_effects}
    assert {name for name, _ in READ_CALLS} == reads
    for name, args in READ_CALLS:
        period = call(name, **args)["period"]
        assert set(period) == {"from", "to", "label"}, (name, period)
        assert period["from"] <= period["to"] and period["label"], (name, period)
    # Without dates: all of the history, said so.
    for name in ("get_transactions", "get_spending_summary", "get_cash_flow"):
        assert call(name)["period"] == {"from": "2025-01-01", "to": "2025-03-15",
                                        "label": "all history"}  # fmt: skip

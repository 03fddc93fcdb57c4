"""chart: bars computed from the rows, equal to the spending tools' totals, each citing its rows."""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal
from itertools import pairwise
from typing import Any

from models.db import Database
from tests.tools.conftest import Caller
from tools.finance.sources import resolve

Q1 = {"start_date": "2025-01-01", "end_date": "2025-03-31"}


def bars(spec: dict[str, Any], series: str = "Spent") -> dict[str, str]:
    return {v["x"]: v["amount"] for v in spec["data"]["values"] if v["series"] == series}


def rows_total(db: Database, user_id: int, sources: list[str], currency: str) -> Decimal:
    """The net of the rows behind `sources` in `currency`, each row counted once."""
    seen: dict[int, Decimal] = {}
    for source in sources:
        for row in resolve(db, user_id, source) or []:
            if row["currency"] == currency:
                seen[row["id"]] = Decimal(row["amount"])
    return sum(seen.values(), Decimal(0))


def test_spending_by_month_equals_the_summary_by_month_per_currency(call: Caller) -> None:
    result = call("chart", kind="spending_by_month", **Q1)
    summary = call("get_spending_summary", group_by="month", **Q1)
    expected = {
        b["currency"]: {g["key"]: g["spent"] for g in b["groups"]} for b in summary["currencies"]
    }
    got = {spec["currency"]: bars(spec) for spec in result["charts"]}
    # Every month of the period has a bar, months without spending at zero.
    assert got["USD"] == expected["USD"]
    assert got["EUR"] == {"2025-01": "0.00", **expected["EUR"]}
    for spec in result["charts"]:
        assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/")
        assert spec["encoding"]["y"]["title"] == f"Amount ({spec['currency']})"
        block = next(b for b in summary["currencies"] if b["currency"] == spec["currency"])
        assert spec["totals"]["Spent"] == block["total_spent"]


def test_every_bar_rests_on_exactly_its_rows(call: Caller, db: Database) -> None:
    for kind in ("spending_by_month", "spending_by_category", "income_vs_spending"):
        for spec in call("chart", kind=kind, **Q1)["charts"]:
            cur = spec["currency"]
            for bar in spec["data"]["values"]:
                net = rows_total(db, call.user_id, bar["sources"], cur)
                sign = -1 if bar["series"] == "Spent" else 1
                assert sign * net == Decimal(bar["amount"]), (kind, bar)
                assert bar["y"] == float(bar["amount"])


def test_spending_by_category_matches_the_summary(call: Caller) -> None:
    spec = call("chart", kind="spending_by_category", **Q1)["charts"]
    summary = call("get_spending_summary", group_by="category", **Q1)["currencies"]
    for chart, block in zip(spec, summary, strict=True):
        assert bars(chart) == {g["key"]: g["spent"] for g in block["groups"]}


def test_income_against_spending_by_month(call: Caller) -> None:
    charts = call("chart", kind="income_vs_spending", **Q1)["charts"]
    usd = next(c for c in charts if c["currency"] == "USD")
    assert bars(usd, "Income") == {"2025-01": "4000.00", "2025-02": "4000.00", "2025-03": "0.00"}
    assert bars(usd, "Spent")["2025-02"] == "1704.68"
    assert usd["encoding"]["color"]["field"] == "series"


def test_one_category_by_month(call: Caller) -> None:
    result = call("chart", kind="spending_by_month", category="groceries", **Q1)
    assert result["category"] == "Groceries"
    (usd,) = result["charts"]
    assert bars(usd) == {"2025-01": "107.55", "2025-02": "91.20", "2025-03": "146.20"}
    assert usd["title"].startswith("Groceries spending by month")


def test_the_chart_is_the_users_own(call: Caller, ledger_ids: dict[str, int]) -> None:
    theirs = call.as_user(ledger_ids["bob"])("chart", kind="spending_by_category", **Q1)
    names = {v["x"] for spec in theirs["charts"] for v in spec["data"]["values"]}
    assert names == {"Groceries", "Subscriptions", "Hobbies"}  # none of Alice's categories
    totals: dict[str, Decimal] = defaultdict(Decimal)
    for spec in call("chart", kind="spending_by_category", **Q1)["charts"]:
        for v in spec["data"]["values"]:
            totals[v["x"]] += Decimal(v["amount"])
    assert totals["Rent"] == Decimal("4500.00")  # Alice's rent, and none of Bob's rows


def test_bad_periods_are_refused(call: Caller) -> None:
    backwards = {"start_date": "2025-03-01", "end_date": "2025-01-01"}
    assert "end_date" in call.error("chart", kind="spending_by_month", **backwards)
    assert "36 months" in call.error(
        "chart", kind="spending_by_month", start_date="2020-01-01", end_date="2025-01-01"
    )
    assert "kind" in call.error("chart", kind="pie", **Q1)


def test_budget_progress_ends_at_the_budget_status_spend(call: Caller, db: Database) -> None:
    result = call("chart", kind="budget_progress", category="groceries", **Q1)
    status = call("get_budget_status", month="2025-01")
    row = next(b for b in status["budgets"] if b["category"] == "Groceries")
    (spec,) = result["charts"]
    assert result["start_date"] == "2025-01-01" and result["end_date"] == "2025-01-31"
    assert spec["totals"] == {"Spent": row["spent"], "Limit": row["limit"]}
    spent = [v for v in spec["data"]["values"] if v["series"] == "Spent"]
    assert len(spent) == 31 and spent[-1]["amount"] == row["spent"]
    for point in spent:
        assert -rows_total(db, call.user_id, point["sources"], "USD") == Decimal(point["amount"])
    assert spec["mark"]["type"] == "line"


def test_budget_progress_uses_the_months_own_budget(call: Caller) -> None:
    march = {"start_date": "2025-03-05", "end_date": "2025-03-31"}
    (spec,) = call("chart", kind="budget_progress", category="Groceries", **march)["charts"]
    row = next(
        b
        for b in call("get_budget_status", month="2025-03")["budgets"]
        if b["category"] == "Groceries"
    )
    # March is under way (today is the 15th): its spend goes on, projected, to the 31st.
    assert spec["totals"] == {"Spent": row["spent"], "Limit": row["limit"], "Projected": "302.15"}


def test_budget_progress_is_the_users_own(call: Caller, ledger_ids: dict[str, int]) -> None:
    bob = call.as_user(ledger_ids["bob"])
    (spec,) = bob("chart", kind="budget_progress", category="Groceries", **Q1)["charts"]
    theirs = next(
        b
        for b in bob("get_budget_status", month="2025-01")["budgets"]
        if b["category"] == "Groceries"
    )
    assert spec["totals"] == {"Spent": theirs["spent"], "Limit": theirs["limit"]}
    assert theirs["limit"] == "5.00"


def test_budget_progress_needs_a_budgeted_category(call: Caller) -> None:
    assert "category" in call.error("chart", kind="budget_progress", **Q1)
    assert "no budget" in call.error("chart", kind="budget_progress", category="Travel", **Q1)


def test_account_balance_steps_by_its_rows_to_the_posted_balance(
    call: Caller, db: Database
) -> None:
    period = {"start_date": "2025-01-01", "end_date": "2030-12-31"}
    assert "36 months" in call.error("chart", kind="account_balance", account="Checking", **period)
    result = call("chart", kind="account_balance", account="checking", **Q1)
    (spec,) = result["charts"]
    assert result["account"] == "Checking" and spec["mark"]["type"] == "line"
    points = spec["data"]["values"]
    assert [p["x"] for p in points] == ["2025-01-31", "2025-02-28", "2025-03-31"]
    balances = call("get_account_balances")["accounts"]
    now = next(a["balance"] for a in balances if a["name"] == "Checking")
    later = call("get_transactions", account="Checking", start_date="2025-04-01")
    after = sum(
        (Decimal(t["amount"]) for t in later["transactions"] if not t["pending"]), Decimal(0)
    )
    assert Decimal(points[-1]["amount"]) == Decimal(now) - after
    for before, point in pairwise(points):
        step = Decimal(point["amount"]) - Decimal(before["amount"])
        assert step == Decimal(point["moved"])
        assert rows_total(db, call.user_id, point["sources"][1:], spec["currency"]) == step


def test_account_balance_is_the_users_own(call: Caller, ledger_ids: dict[str, int]) -> None:
    bob = call.as_user(ledger_ids["bob"])
    (spec,) = bob("chart", kind="account_balance", account="Checking", **Q1)["charts"]
    now = next(a for a in bob("get_account_balances")["accounts"] if a["name"] == "Checking")
    assert spec["data"]["values"][-1]["amount"] == now["balance"]
    assert "account" in bob.error("chart", kind="account_balance", account="Euro Card", **Q1)

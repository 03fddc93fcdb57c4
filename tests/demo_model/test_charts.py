"""The demo model asks for a chart when the user says chart, plot, graph, trend or over time."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

import pytest

from tests.demo_model.conftest import Seeded
from tests.demo_model.oracle import Oracle, span

THIS_YEAR = span("2025-01-01", "2025-09-20")


def totals(spec: dict[str, object], series: str) -> Decimal:
    values = spec["data"]["values"]  # type: ignore[index]
    return sum((Decimal(v["amount"]) for v in values if v["series"] == series), Decimal(0))


def test_a_chart_of_this_year_by_month_adds_up_to_the_spending_tools_totals(
    year: Seeded,
) -> None:
    turn = year.demo().ask("Show my spending by month this year as a chart")
    (call,) = [args for name, args, _ in turn.calls if name == "chart"]
    assert call == {"kind": "spending_by_month", **THIS_YEAR}
    (result,) = turn.results("chart")
    drawn = {(totals(s, "Spent"), s["currency"]) for s in result["charts"]}
    assert drawn == Oracle(year).total(THIS_YEAR)
    months = [v["x"] for v in result["charts"][0]["data"]["values"]]
    assert months == [f"2025-{m:02d}" for m in range(1, 10)]


@pytest.mark.parametrize(
    ("question", "kind", "select"),
    [
        ("Plot my spending trend", "spending_by_month", "a bar"),
        ("How has my spending changed over time?", "spending_by_month", "a bar"),
        ("Chart my spending by category last month", "spending_by_category", "a bar"),
        ("Graph money in vs out this year", "income_vs_spending", "a bar"),
        ("Chart my spending by category as a donut", "category_share", "a slice"),
        ("Pie chart of my spending last month", "category_share", "a slice"),
        ("Stacked chart of my spending by category", "category_by_month", "a bar"),
        ("Chart my categories each month", "category_by_month", "a bar"),
    ],
)
def test_chart_words_ask_for_the_chart_that_fits(
    year: Seeded, question: str, kind: str, select: str
) -> None:
    turn = year.demo().ask(question)
    kinds = [args["kind"] for name, args, _ in turn.calls if name == "chart"]
    assert kinds == [kind], turn.text
    assert f"Select {select}" in turn.text


def test_a_donut_of_last_month_has_the_spending_tools_total(year: Seeded) -> None:
    turn = year.demo().ask("Pie chart of my spending last month")
    (call,) = [args for name, args, _ in turn.calls if name == "chart"]
    (result,) = turn.results("chart")
    period = {"start_date": call["start_date"], "end_date": call["end_date"]}
    assert period == span("2025-08-01", "2025-08-31")
    for spec in result["charts"]:
        assert spec["mark"]["type"] == "arc"
        assert all(Decimal(v["amount"]) > 0 for v in spec["data"]["values"])
    drawn = {(totals(s, "Spent"), s["currency"]) for s in result["charts"]}
    # A slice is a share of spending: a category whose refunds pass its spending (August's
    # Amazon return of a July order) has none, so the ring adds up the other categories.
    summary = year.tools()("get_spending_summary", **period, top_n=50)
    slices = {
        (sum((Decimal(g["spent"]) for g in b["groups"] if Decimal(g["spent"]) > 0), Decimal(0)),
         b["currency"])
        for b in summary["currencies"]
    }  # fmt: skip
    assert drawn == slices
    assert any(Decimal(g["spent"]) < 0 for b in summary["currencies"] for g in b["groups"])
    assert "refunds match or pass" in result["charts"][0]["note"]
    assert Oracle(year).total(period) != slices  # the spending total nets that category too


def test_comparing_several_months_draws_them_side_by_side(year: Seeded) -> None:
    turn = year.demo().ask("Compare my spending in the last three months")
    (call,) = [args for name, args, _ in turn.calls if name == "chart"]
    assert call["kind"] == "spending_by_month", turn.text
    (result,) = turn.results("chart")
    period = {"start_date": call["start_date"], "end_date": call["end_date"]}
    drawn = {(totals(s, "Spent"), s["currency"]) for s in result["charts"]}
    assert drawn == Oracle(year).total(period)
    assert period == span("2025-06-21", "2025-09-20")
    months = [v["x"] for v in result["charts"][0]["data"]["values"]]
    assert months == ["2025-06", "2025-07", "2025-08", "2025-09"]


def test_a_budget_as_a_chart_ends_at_its_budget_status(year: Seeded) -> None:
    turn = year.demo().ask("How is my groceries budget going, as a chart?")
    (call,) = [args for name, args, _ in turn.calls if name == "chart"]
    assert call["kind"] == "budget_progress", turn.text
    (result,) = turn.results("chart")
    (spec,) = result["charts"]
    status = year.demo().ask("How is my groceries budget going?").results("get_budget_status")
    rows = [b for r in status for b in r["budgets"] if b["category"] == "Groceries"]
    assert rows and spec["totals"]["Spent"] == rows[0]["spent"]
    assert spec["totals"]["Limit"] == rows[0]["limit"]
    # September is under way (the 20th): the spend goes on, dashed, to the 30th at its pace
    pace = (Decimal(rows[0]["spent"]) * 30 / 20).quantize(Decimal("0.01"), ROUND_HALF_UP)
    assert spec["totals"]["Projected"] == str(pace)
    assert "Select a point" in turn.text


def test_a_balance_over_time_ends_at_the_posted_balance(year: Seeded) -> None:
    turn = year.demo().ask("My checking balance over time")
    (call,) = [args for name, args, _ in turn.calls if name == "chart"]
    assert call["kind"] == "account_balance", turn.text
    (result,) = turn.results("chart")
    (balances,) = turn.results("get_account_balances")
    account = next(a for a in balances["accounts"] if a["name"] == call["account"])
    assert "checking" in account["name"].lower() or account["kind"] == "checking"
    assert result["charts"][0]["data"]["values"][-1]["amount"] == account["balance"]

"""The demo's answers against the tools' own results: right subject, period, currency, refunds."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from tests.demo_model.conftest import Seeded, Turn, money

THIS_YEAR = {"start_date": "2025-01-01", "end_date": "2025-09-20"}
AUGUST = {"start_date": "2025-08-01", "end_date": "2025-08-31"}
JULY = {"start_date": "2025-07-01", "end_date": "2025-07-31"}
MARCH = {"start_date": "2025-03-01", "end_date": "2025-03-31"}


def line_of(turn: Turn, start: str) -> str:
    """Return the one answer line that starts with `start`."""
    found = [line for line in turn.text.splitlines() if line.startswith(start)]
    assert len(found) == 1, (start, turn.text)
    return found[0]


def spent_in(summary: dict[str, Any], key: str) -> dict[str, dict[str, Any]]:
    """Return a summary's group `key` per currency."""
    return {
        block["currency"]: group
        for block in summary["currencies"]
        for group in block["groups"]
        if group["key"] == key
    }


def totals_of(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Return a get_transactions result's totals per currency."""
    return {t["currency"]: t for t in result["totals"]}


def test_travel_this_year_is_totalled_per_currency_with_the_refund_stated(year: Seeded) -> None:
    turn = year.demo().ask("How much did I spend on travel this year?")
    tools = year.tools()
    travel = spent_in(tools("get_spending_summary", **THIS_YEAR, top_n=50), "Travel")
    totals = totals_of(tools("get_transactions", **THIS_YEAR, category="Travel"))
    assert set(travel) == set(totals) == {"EUR", "USD"}
    eur, usd = line_of(turn, "- EUR:"), line_of(turn, "- USD:")
    assert money(travel["EUR"]["spent"], "EUR") + " net" in eur
    assert Decimal(totals["EUR"]["money_in"]) > 0  # the seeded trip has a hotel refund
    assert f"{money(totals['EUR']['money_out'], 'EUR')} charged" in eur
    assert f"minus {money(totals['EUR']['money_in'], 'EUR')} refunded" in eur
    assert money(travel["USD"]["spent"], "USD") in usd and "refund" not in usd
    refunds = tools("get_transactions", **THIS_YEAR, category="Travel", direction="in")
    for row in refunds["transactions"]:
        assert (
            f"- {row['date']}: {row['merchant']}, {money(row['amount'], 'EUR')} back" in turn.text
        )
    # Neither the net nor the gross amounts are ever added across currencies.
    for key in ("money_out", "net"):
        mixed = abs(Decimal(totals["EUR"][key])) + abs(Decimal(totals["USD"][key]))
        assert mixed not in [a for a, _ in turn.amounts()]


def test_restaurants_this_month_vs_last_compares_only_restaurants(small_ledger: Seeded) -> None:
    turn = small_ledger.demo().ask("Restaurants this month vs last?")
    compared = small_ledger.tools()(
        "compare_spending",
        period_a_start="2025-02-01",
        period_a_end="2025-02-28",
        period_b_start="2025-03-01",
        period_b_end="2025-03-15",
    )
    assert len(compared["currencies"]) == 2
    for block in compared["currencies"]:
        cur = block["currency"]
        row = next(r for r in block["categories"] if r["category"] == "Restaurants")
        line = line_of(turn, f"- {cur}:")
        assert line.startswith(f"- {cur}: **{money(row['period_b'], cur)}** against ")
        assert money(row["period_a"], cur) in line
        assert f"down {money(row['change'], cur)} ({row['change_pct']}%)" in line
    others = {r["category"] for b in compared["currencies"] for r in b["categories"]}
    assert not [name for name in others - {"Restaurants"} if name in turn.text]
    assert "2025-03-01 to 2025-03-15" in turn.text and "2025-02-01 to 2025-02-28" in turn.text


def test_follow_ups_reuse_the_earlier_category_and_period(year: Seeded) -> None:
    demo, tools = year.demo(), year.tools()
    first = demo.ask("What did I spend on groceries last month?")
    before = demo.ask("And the month before?")
    other = demo.ask("What about restaurants?")
    for turn, span, category in (
        (first, AUGUST, "Groceries"),
        (before, JULY, "Groceries"),
        (other, JULY, "Restaurants"),
    ):
        expected = spent_in(tools("get_spending_summary", **span, top_n=50), category)["USD"]
        assert turn.text.startswith(f"**{category}** in ")
        assert f"({span['start_date']} to {span['end_date']})" in turn.text
        assert f"- USD: **{money(expected['spent'], 'USD')}**" in turn.text
        assert all(args.get("start_date") == span["start_date"] for _, args, _ in turn.calls)


def test_a_comparison_follow_up_steps_both_periods_back(small_ledger: Seeded) -> None:
    demo = small_ledger.demo()
    demo.ask("How do restaurants this month compare to last month?")
    turn = demo.ask("and the month before?")
    compared = turn.results("compare_spending")[0]
    assert compared["period_a"]["start_date"] == "2025-01-01"
    assert compared["period_a"]["end_date"] == "2025-01-31"
    assert compared["period_b"]["start_date"] == "2025-02-01"
    assert compared["period_b"]["end_date"] == "2025-02-28"
    usd = next(b for b in compared["currencies"] if b["currency"] == "USD")
    row = next(r for r in usd["categories"] if r["category"] == "Restaurants")
    assert (
        f"- USD: **{money(row['period_b'], 'USD')}** against {money(row['period_a'], 'USD')}"
        in (turn.text)
    )
    assert "Groceries" not in turn.text


@pytest.mark.parametrize(
    "question",
    [
        "Write me a poem about the sea",
        "What's the weather like in Paris tomorrow?",
        "Tell me a joke",
        "Who won the world cup in 2022?",
        "What is the capital of France?",
    ],
)
def test_off_topic_gets_an_honest_short_reply_without_tools(year: Seeded, question: str) -> None:
    demo = year.demo()
    demo.ask("What did I spend on groceries last month?")  # context must not leak into it
    turn = demo.ask(question)
    assert turn.calls == []
    assert "can't help with that" in turn.text
    assert "spending by category" in turn.text and "budgets" in turn.text
    assert turn.amounts() == []


@pytest.mark.parametrize(
    "question",
    [
        "What are my account balances?",
        "How much did I spend this month?",
        "How much did I spend on travel this year?",
        "How am I doing?",
        "Which subscriptions am I paying for?",
        "Restaurants this month vs last?",
        "What were my biggest purchases last month?",
    ],
)
def test_a_user_with_no_data_is_told_so(empty: Seeded, question: str) -> None:
    turn = empty.demo().ask(question)
    assert "I don't see any accounts or transactions for you yet" in turn.text
    assert "Your accounts:" not in turn.text
    assert turn.amounts() == []


def test_no_budgets_and_no_data_are_both_said(empty: Seeded) -> None:
    turn = empty.demo().ask("Am I over budget?")
    assert turn.text.startswith("You have no budgets set for September 2025.")
    assert "I don't see any accounts or transactions" in turn.text


def test_eating_out_in_march_finds_restaurants_in_both_currencies(year: Seeded) -> None:
    turn = year.demo().ask("How much did I spend eating out in March?")
    restaurants = spent_in(year.tools()("get_spending_summary", **MARCH, top_n=50), "Restaurants")
    assert set(restaurants) == {"EUR", "USD"}
    for cur, group in restaurants.items():
        line = line_of(turn, f"- {cur}:")
        assert f"**{money(group['spent'], cur)}**" in line
        assert f"{plural_transactions(group['count'])}" in line
        assert f"{group['share_pct']}% of your" in line


def plural_transactions(count: int) -> str:
    """Return how answers count transactions."""
    return f"{count} transaction" + ("" if count == 1 else "s")


def test_a_merchant_question_states_its_refunds(year: Seeded) -> None:
    turn = year.demo().ask("How much did I spend at Amazon this year?")
    tools = year.tools()
    usd = totals_of(tools("get_transactions", **THIS_YEAR, merchant="Amazon"))["USD"]
    assert Decimal(usd["money_in"]) > 0
    line = line_of(turn, "- USD:")
    assert f"**{money(usd['net'], 'USD')} net**" in line
    assert (
        f"{money(usd['money_out'], 'USD')} charged, minus {money(usd['money_in'], 'USD')}" in line
    )
    for row in tools("get_transactions", **THIS_YEAR, merchant="Amazon", direction="in")[
        "transactions"
    ]:
        assert f"- {row['date']}: Amazon, {money(row['amount'], 'USD')} back" in turn.text


def test_total_spending_lists_the_refunds_it_already_deducted(year: Seeded) -> None:
    turn = year.demo().ask("How much did I spend last month?")
    tools = year.tools()
    summary = tools("get_spending_summary", **AUGUST, top_n=50)
    (usd,) = summary["currencies"]
    assert f"- USD: **{money(usd['total_spent'], 'USD')}** across" in turn.text
    refunds = tools("get_transactions", **AUGUST, flow="refund", limit=200)["transactions"]
    assert refunds  # August has an online order returned
    for row in refunds:
        assert f"{row['merchant']}, {money(row['amount'], 'USD')} back, {row['category']}" in (
            turn.text
        )
    assert "Salary" not in turn.text and "Acme Corp Payroll" not in turn.text


def test_a_budget_question_on_one_category_answers_only_it(year: Seeded) -> None:
    turn = year.demo().ask("Am I over budget on eating out?")
    status = year.tools()("get_budget_status", month="2025-09")
    row = next(b for b in status["budgets"] if b["category"] == "Restaurants")
    line = line_of(turn, "- Restaurants:")
    assert f"spent {money(row['spent'], 'USD')} of {money(row['limit'], 'USD')}" in line
    assert f"({row['percent_used']}%)" in line
    assert [b["category"] for b in status["budgets"] if b["category"] in turn.text] == [
        "Restaurants"
    ]


def test_the_budget_of_the_trip_month_mentions_uncounted_euros(year: Seeded) -> None:
    turn = year.demo().ask("How was my restaurants budget in March?")
    row = next(
        b
        for b in year.tools()("get_budget_status", month="2025-03")["budgets"]
        if b["category"] == "Restaurants"
    )
    (other,) = row["not_counted_other_currencies"]
    assert f"{money(other['spent'], 'EUR')} also spent, not counted against this USD budget" in (
        turn.text
    )


def test_biggest_purchases_leave_out_transfers(year: Seeded) -> None:
    turn = year.demo().ask("What were my biggest purchases in March?")
    tools = year.tools()
    summary = tools("get_spending_summary", **MARCH, top_n=50)
    spending = {g["key"] for block in summary["currencies"] for g in block["groups"]}
    rows = tools("get_transactions", **MARCH, direction="out", sort="amount_desc", limit=50)
    expected = [r for r in rows["transactions"] if r["category"] in spending][:5]
    listed = [line for line in turn.text.splitlines() if line.startswith("- 2025-")]
    assert listed == [
        f"- {r['date']}: {r['merchant']}, {money(r['amount'], r['currency'])}, {r['category']}"
        for r in expected
    ]
    assert "Transfers" not in turn.text


def test_subscriptions_quote_the_recurring_tool(year: Seeded) -> None:
    turn = year.demo().ask("Which subscriptions am I paying for?")
    found = year.tools()("find_recurring_payments")
    for item in found["recurring"]:
        if item["active"] and item["direction"] == "out":
            said = f"- {item['name']}: {money(item['last_amount'], item['currency'])} "
            assert f"{said}{item['cadence']}" in turn.text
    # The total is the subscriptions' own: the rent and the bills are listed, not added in.
    mine = year.tools()("find_recurring_payments", category="Subscriptions", direction="out")
    (total,) = mine["estimated_monthly_total"]
    assert f"**{money(total['amount'], 'USD')} a month** for your subscriptions" in turn.text
    (everything,) = found["estimated_monthly_total"]
    assert money(everything["amount"], "USD") not in turn.text


def test_a_merchant_named_loosely_is_found(year: Seeded) -> None:
    turn = year.demo().ask("how much did I spend at trader joes in August?")
    usd = totals_of(year.tools()("get_transactions", **AUGUST, merchant="Trader Joe's"))["USD"]
    assert turn.text.startswith("**Trader Joe's** in August 2025")
    assert f"- USD: **{money(usd['net'], 'USD')}**, across" in turn.text


def test_an_unknown_subject_is_said_plainly_not_replaced_by_totals(year: Seeded) -> None:
    turn = year.demo().ask("How much did I spend on unicorns in March?")
    assert turn.text.startswith(
        "I don't see any spending on a category or merchant called “unicorns” in March 2025"
    )
    assert "Travel" in turn.text  # it names the categories that do exist then
    assert turn.amounts() == []


SEPTEMBER = {"start_date": "2025-09-01", "end_date": "2025-09-20"}


@pytest.mark.parametrize(
    "question", ["Amazon this month vs last month", "How does Amazon this month compare to last?"]
)
def test_a_merchant_comparison_compares_only_that_merchant(year: Seeded, question: str) -> None:
    turn = year.demo().ask(question)
    tools = year.tools()
    spent = {"merchant": "Amazon", "flow": "net_spending"}
    before = totals_of(tools("get_transactions", **AUGUST, **spent))["USD"]
    after = totals_of(tools("get_transactions", **SEPTEMBER, **spent))["USD"]
    assert Decimal(before["money_in"]) > 0  # August has an Amazon order returned
    line = line_of(turn, "- USD:")
    assert line.startswith(f"- USD: **{money(after['net'], 'USD')}")
    # August's return (of a July order) passes August's orders: more came back.
    assert Decimal(before["net"]) > 0
    assert f" against {money(before['net'], 'USD')} more came back than was spent (" in line
    assert (
        f"{money(before['money_out'], 'USD')} charged, minus "
        f"{money(before['money_in'], 'USD')} refunded" in line
    )
    spent_more = -Decimal(after["net"]) > -Decimal(before["net"])
    assert (", up " if spent_more else ", down ") in line
    # Only the merchant's rows are read, and no category of all spending is shown.
    rows = [args for name, args, _ in turn.calls if name == "get_transactions"]
    assert rows and all(args.get("merchant") == "Amazon" for args in rows)
    compared = turn.results("compare_spending")[0]
    names = {r["category"] for b in compared["currencies"] for r in b["categories"]}
    assert not [name for name in names if name in turn.text]
    assert "in total" not in turn.text


@pytest.mark.parametrize(
    "question",
    [
        "Unicorns this month vs last month",
        "Did I spend more at Starbucks this month than last month?",
    ],
)
def test_a_comparison_of_nothing_the_user_has_says_so(year: Seeded, question: str) -> None:
    turn = year.demo().ask(question)
    said = question.split()[0].lower() if question.startswith("U") else "starbucks"
    assert turn.text.startswith(
        f"I don't see any spending on a category or merchant called “{said}” in September 2025"
    ), turn.text
    assert " or in August 2025" in turn.text  # read as the comparison it is
    assert turn.amounts() == []
    assert not turn.results("get_transactions")

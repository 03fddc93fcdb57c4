"""Questions of issue 38, each asked several ways: what lies ahead, money in and out, averages,
top merchants per currency, a balance's sign and stated periods. The figures come from the
tools (the oracle); the demo must quote them whatever the phrasing."""

from __future__ import annotations

from decimal import Decimal

import pytest

from demo_model.intent import resolve
from tests.demo_model.conftest import DEMO_DAY, Seeded, money
from tests.demo_model.oracle import Oracle, span, stated

LAST_MONTH = span("2025-08-01", "2025-08-31")
ALL_HISTORY = span("2024-04-01", "2025-09-20")


def asked(year: Seeded, question: str) -> tuple[str, set[tuple[Decimal, str]], set[object]]:
    turn = year.demo().ask(question)
    assert "did not understand" not in turn.text, turn.text
    return turn.text, set(turn.amounts()), stated([r for _, _, r in turn.calls])


@pytest.mark.parametrize(
    "question",
    [
        "What will my balance be on 15 January?",
        "How much money will I have on January 15th?",
        "Forecast my balances for 2026-01-15",
        "What's my projected balance on the 15th of January?",
        "Where will my accounts stand on Jan 15?",
    ],
)
def test_a_balance_ahead_is_projected_and_names_its_series(year: Seeded, question: str) -> None:
    assert resolve([question], DEMO_DAY).kind == "forecast"
    text, quoted, _ = asked(year, question)
    expected = Oracle(year).forecast("2026-01-15")
    assert expected <= quoted, (sorted(expected - quoted), text)
    assert "Recurring series used:" in text and "Parkview Apartments" in text


@pytest.mark.parametrize(
    "question",
    [
        "What bills are coming up?",
        "Which payments are due in the next 30 days?",
        "What do I have to pay over the next 30 days?",
        "Show my upcoming bills",
        "Any payments due soon?",
    ],
)
def test_the_bills_due_are_listed_with_their_total(year: Seeded, question: str) -> None:
    assert resolve([question], DEMO_DAY).kind == "upcoming"
    text, quoted, _ = asked(year, question)
    assert Oracle(year).bills(30) <= quoted, text
    assert "2025-10-01: Parkview Apartments" in text


@pytest.mark.parametrize(
    ("question", "series"),
    [
        ("When is my next rent?", "Parkview Apartments"),
        ("When's the rent due?", "Parkview Apartments"),
        ("When do I get paid next?", "Acme Corp Payroll"),
        ("When is payday?", "Acme Corp Payroll"),
        ("When will Netflix charge me next?", "Netflix"),
        ("When is the next Spotify payment?", "Spotify"),
    ],
)
def test_the_next_payment_of_a_series_has_its_date_and_amount(
    year: Seeded, question: str, series: str
) -> None:
    assert resolve([question], DEMO_DAY).kind == "next_payment"
    text, quoted, _ = asked(year, question)
    found = year.tools()("find_recurring_payments")["recurring"]
    (item,) = [s for s in found if s["name"] == series]
    assert f"Your next {series} payment" in text
    assert item["next_expected_date"] in text
    assert Oracle(year).series(series) <= quoted


@pytest.mark.parametrize(
    "question",
    [
        "What went up in price?",
        "Which subscriptions got more expensive?",
        "Did any of my bills increase?",
        "Has Netflix raised its price?",
        "Any price increases on my recurring payments?",
    ],
)
def test_a_price_change_is_found_however_it_is_asked(year: Seeded, question: str) -> None:
    assert resolve([question], DEMO_DAY).kind == "price_changes"
    text, quoted, _ = asked(year, question)
    assert "Netflix: 17.99 USD monthly, up from 15.49 USD since June 2025" in text
    assert Oracle(year).price_changes() <= quoted


@pytest.mark.parametrize(
    "question",
    [
        "What's my average monthly spending?",
        "How much do I spend per month on average?",
        "How much do I usually spend a month?",
        "What do I spend in a typical month?",
    ],
)
def test_an_average_is_a_number_not_a_chart(year: Seeded, question: str) -> None:
    text, quoted, _ = asked(year, question)
    expected = Oracle(year).average_total(span("2024-04-01", "2025-08-31"), 17)
    assert expected <= quoted, (sorted(expected - quoted), text)
    assert "a month** on average over the 17 whole months of your history" in text
    assert not [n for n, _, _ in year.demo().ask(question).calls if n == "chart"]


@pytest.mark.parametrize(
    "question",
    [
        "Money in vs out last month",
        "What did I earn and spend last month?",
        "income vs spending last month",
        "How much came in and went out last month?",
    ],
)
def test_money_in_counts_uncategorised_income(year: Seeded, question: str) -> None:
    text, quoted, _ = asked(year, question)
    oracle = Oracle(year)
    assert oracle.income_total(LAST_MONTH) | oracle.total(LAST_MONTH) <= quoted, text
    assert "Money in and out in August 2025" in text


def test_income_of_a_year_includes_the_freelance_payments_without_a_category(
    year: Seeded,
) -> None:
    text, quoted, _ = asked(year, "What was my income this year?")
    assert "Uncategorized" in text and "Brightside Studio" in text
    assert Oracle(year).income(span("2025-01-01", "2025-09-20")) <= quoted


@pytest.mark.parametrize(
    "question",
    [
        "Which merchants did I spend the most at last month?",
        "top merchants last month",
        "Where did I spend the most last month?",
    ],
)
def test_top_merchants_are_listed_for_each_currency(year: Seeded, question: str) -> None:
    text, quoted, _ = asked(year, question)
    assert Oracle(year).top_merchants(LAST_MONTH, 3) <= quoted, text
    # In March the trip's euros have leaders of their own.
    march = asked(year, question.replace("last month", "in March"))[0]
    assert "- EUR:" in march and "- USD:" in march


def test_a_negative_balance_keeps_its_sign(year: Seeded) -> None:
    text, _, _ = asked(year, "What are my balances?")
    found = year.tools()("get_account_balances")
    negative = [a for a in found["accounts"] if a["balance"].startswith("-")]
    assert negative  # the Visa card is owed
    for a in negative:
        assert f"{a['name']} ({a['kind'].replace('_', ' ')}): -{money(a['balance'], 'USD')}" in (
            text
        )


@pytest.mark.parametrize(
    ("question", "period"),
    [
        ("How much did I spend at Amazon?", "all your history (2024-04-01 to 2025-09-20)"),
        ("biggest expense this yr", "2025 so far (2025-01-01 to 2025-09-20)"),
        ("How much income did I get?", "all your history (2024-04-01 to 2025-09-20)"),
    ],
)
def test_a_period_is_always_stated_and_never_silently_this_month(
    year: Seeded, question: str, period: str
) -> None:
    text, _, _ = asked(year, question)
    assert period in text, text


@pytest.mark.parametrize(
    "question",
    [
        "How much did I transfer to savings?",
        "How much money did I move into my savings account?",
        "What transfers did I make to savings?",
    ],
)
def test_transfers_are_money_moved_not_spent(year: Seeded, question: str) -> None:
    assert resolve([question], DEMO_DAY).kind == "transfers"
    text, quoted, _ = asked(year, question)
    moved = year.tools()(
        "get_transactions", flow="transfer", merchant="savings", direction="out", limit=1
    )
    (usd,) = moved["totals"]
    assert (Decimal(usd["net"]).copy_abs(), "USD") in quoted, text
    assert "neither spending nor income" in text


def test_an_order_to_move_money_is_not_read_as_a_question_about_transfers() -> None:
    assert resolve(["Transfer 200 dollars to my savings account"], DEMO_DAY).kind == "unknown"

"""A corpus of questions: every figure of an answer is checked against the tools' results.

A supported question's answer must quote the figures the oracle (the tools called directly, or
the database) gives for it, and every amount it quotes must be one the tools returned in the same
turn or one of those expected figures (a total the answer adds up in one currency). Questions the
demo cannot answer must get "I did not understand" and the list of what it can answer; questions in
another language get the honest English-only note in that language, with no figures at all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from tests.demo_model.conftest import Seeded
from tests.demo_model.oracle import Figures, Oracle, span, stated

LAST_MONTH = span("2025-08-01", "2025-08-31")
JULY = span("2025-07-01", "2025-07-31")
MARCH = span("2025-03-01", "2025-03-31")
OCTOBER = span("2024-10-01", "2024-10-31")
THIS_MONTH = span("2025-09-01", "2025-09-20")
THIS_WEEK = span("2025-09-15", "2025-09-20")
THIS_YEAR = span("2025-01-01", "2025-09-20")
LAST_12_MONTHS = span("2024-09-21", "2025-09-20")
# A question naming no period covers all of the history: 18 months of demo data.
ALL_HISTORY = span("2024-04-01", "2025-09-20")
WHOLE_MONTHS = span("2024-04-01", "2025-08-31")


@dataclass(frozen=True)
class Case:
    """A question and the figures (from the oracle) its answer must quote."""

    question: str
    expect: Callable[[Oracle], Figures]
    says: str = ""  # a phrase the answer must contain, when figures alone cannot tell


SUPPORTED = [
    # income
    Case("How much did I earn last month?", lambda o: o.income(LAST_MONTH)),
    Case("What was my income in October?", lambda o: o.income(OCTOBER)),
    Case("How much income did I get this year?", lambda o: o.income(THIS_YEAR)),
    Case("How much did I get paid in July?", lambda o: o.income(JULY)),
    Case("What was my salary last month?", lambda o: o.income(LAST_MONTH)),
    # refunds
    Case("Show my Amazon refunds", lambda o: o.refunds(ALL_HISTORY, merchant="Amazon")),
    Case("What refunds did I get this year?", lambda o: o.refunds(THIS_YEAR)),
    Case("Did I get any refunds in March?", lambda o: o.refunds(MARCH)),
    Case("Any travel refunds this year?", lambda o: o.refunds(THIS_YEAR, category="Travel")),
    # trips and travel
    Case("How much did I spend on my trip abroad in March?", lambda o: o.category("Travel", MARCH)),
    Case("How much did my vacation cost this year?", lambda o: o.category("Travel", THIS_YEAR)),
    Case("What did I spend on travel in March?", lambda o: o.category("Travel", MARCH)),
    Case(
        "What did I spend on flights last year?",
        lambda o: set(),
        says="I don't see any travel spending in 2024",
    ),
    # spending by category and period
    Case(
        "What did I spend on groceries last month?", lambda o: o.category("Groceries", LAST_MONTH)
    ),
    Case(
        "How much did I spend on restaurants in October?",
        lambda o: o.category("Restaurants", OCTOBER),
    ),
    Case(
        "How much did I spend on transport this year?", lambda o: o.category("Transport", THIS_YEAR)
    ),
    Case("How much did I spend eating out in March?", lambda o: o.category("Restaurants", MARCH)),
    Case("How much did I spend last month?", lambda o: o.total(LAST_MONTH)),
    Case("What did I spend in July?", lambda o: o.total(JULY)),
    Case("How much have I spent this week?", lambda o: o.total(THIS_WEEK)),
    # merchants
    Case("How much did I spend at Amazon this year?", lambda o: o.merchant("Amazon", THIS_YEAR)),
    Case(
        "How much did I spend at Whole Foods in August?",
        lambda o: o.merchant("Whole Foods", LAST_MONTH),
    ),
    Case("How much did I spend on Uber last month?", lambda o: o.merchant("Uber", LAST_MONTH)),
    # budgets
    Case("Am I over budget this month?", lambda o: o.budget("2025-09")),
    Case("How is my groceries budget?", lambda o: o.budget("2025-09", "Groceries")),
    Case("How was my restaurants budget in March?", lambda o: o.budget("2025-03", "Restaurants")),
    # balances
    Case("What are my account balances?", lambda o: o.balances()),
    Case("How much money do I have?", lambda o: o.balances()),
    # largest purchases
    Case("What were my biggest purchases last month?", lambda o: o.largest(LAST_MONTH)),
    Case("What were my largest purchases in March?", lambda o: o.largest(MARCH)),
    # comparisons
    Case(
        "Restaurants this month vs last month",
        lambda o: o.compare(LAST_MONTH, THIS_MONTH, "Restaurants"),
    ),
    Case("Compare my spending in July and August", lambda o: o.compare(JULY, LAST_MONTH)),
    Case(
        "Did I spend more on groceries in August than in July?",
        lambda o: o.compare(JULY, LAST_MONTH, "Groceries"),
    ),
    # comparisons of a merchant, named with or without "at", and of nothing the user has
    Case(
        "Amazon this month vs last month",
        lambda o: o.merchant("Amazon", THIS_MONTH) | o.merchant("Amazon", LAST_MONTH),
        says="**Amazon**, September 2025 so far",
    ),
    Case(
        "How did Uber in August compare to July?",
        lambda o: o.merchant("Uber", LAST_MONTH) | o.merchant("Uber", JULY),
        says="**Uber**, August 2025",
    ),
    Case(
        "Did I spend more at Whole Foods in August than in July?",
        lambda o: o.merchant("Whole Foods", LAST_MONTH) | o.merchant("Whole Foods", JULY),
        says="**Whole Foods Market**, August 2025",
    ),
    Case(
        "Did I spend more at Starbucks in August than in July?",
        lambda o: set(),
        says="I don't see any spending on a category or merchant called “starbucks”",
    ),
    Case(
        "Unicorns this month vs last month",
        lambda o: set(),
        says="I don't see any spending on a category or merchant called “unicorns”",
    ),
    # recurring and overview
    Case("Which subscriptions am I paying for?", lambda o: o.subscriptions()),
    Case("How am I doing?", lambda o: o.balances() | o.total(THIS_MONTH)),
    # misreadings put right: spelling, money in against out, pending rows
    Case(
        "how much did i spnd on restarants in septmber",
        lambda o: o.category("Restaurants", THIS_MONTH),
    ),
    Case(
        "how much did i spend on grocereis last month",
        lambda o: o.category("Groceries", LAST_MONTH),
    ),
    Case("Money in vs out in August", lambda o: o.income_total(LAST_MONTH) | o.total(LAST_MONTH)),
    Case("Do I have any pending transactions?", lambda o: o.pending()),
    Case(
        "What's my savings rate?",
        lambda o: o.income_total(ALL_HISTORY) | o.total(ALL_HISTORY),
        says="What you kept in all your history (2024-04-01 to 2025-09-20)",
    ),
    Case(
        "How much did I save last month?",
        lambda o: o.income_total(LAST_MONTH) | o.total(LAST_MONTH),
        says="a savings rate of **",
    ),
    Case(
        "What's my average monthly spending on groceries?",
        lambda o: o.average("Groceries", WHOLE_MONTHS, 17),
    ),
    Case(
        "What's my average monthly spending?",
        lambda o: o.average_total(WHOLE_MONTHS, 17),
        says="a month** on average",
    ),
    Case("Which merchant do I spend the most at?", lambda o: o.top_merchants(ALL_HISTORY, 3)),
    Case(
        "Which subscriptions do I have?",
        lambda o: o.subscriptions(),
        says="Other recurring payments, not subscriptions",
    ),
    # what lies ahead: a balance on a day, the bills due, the next payment, prices that moved
    Case(
        "What will my balance be on 15 January?",
        lambda o: o.forecast("2026-01-15"),
        says="Recurring series used: Acme Corp Payroll",
    ),
    Case("What bills are coming up?", lambda o: o.bills(30), says="2025-10-01: Parkview"),
    Case("When is my next rent?", lambda o: o.series("Parkview Apartments"), says="2025-10-01"),
    Case("What went up in price?", lambda o: o.price_changes(), says="Netflix"),
    # charts: the figures are the chart's bars (tests/demo_model/test_charts.py checks them)
    Case(
        "Show my spending by month this year as a chart",
        lambda o: set(),
        says="Here is your spending by month, 2025-01-01 to 2025-09-20",
    ),
    Case(
        "Chart my spending by category last month",
        lambda o: set(),
        says="Here is your spending by category, 2025-08-01 to 2025-08-31",
    ),
    Case(
        "Plot my groceries spending this year",
        lambda o: set(),
        says="Here is your Groceries spending by month",
    ),
    Case(
        "Graph income vs spending this year",
        lambda o: set(),
        says="Here is your income against spending by month",
    ),
]

BEYOND = [
    "Can I afford a new car?",
    "Should I invest in index funds?",
    "What's my credit score?",
    "Predict my spending for next month",
    "Cancel my Netflix subscription",
    "Transfer 200 dollars to my savings account",
    "What is the interest rate on my savings account?",
    "How much tax will I owe this year?",
]
CAN_ANSWER = ("income", "refunds", "spending", "budgets", "balances", "largest purchases")

FOREIGN = [
    ("¿Cuánto gasté en restaurantes el mes pasado?", "inglés"),
    ("¿Cuáles son los saldos de mis cuentas?", "inglés"),
    ("Wie viel habe ich letzten Monat für Lebensmittel ausgegeben?", "Englisch"),
    ("Wie hoch war mein Einkommen im August?", "Englisch"),
    ("Combien ai-je dépensé en courses le mois dernier ?", "anglais"),
    ("Quel est le solde de mes comptes ?", "anglais"),
]
ENGLISH_ONLY = (
    "The offline demo understands English; with an API key Claude answers in any language"
)


@pytest.mark.parametrize("case", SUPPORTED, ids=[c.question for c in SUPPORTED])
def test_a_supported_question_quotes_the_right_figures_and_no_others(
    year: Seeded, case: Case
) -> None:
    turn = year.demo().ask(case.question)
    expected = case.expect(Oracle(year))
    quoted = set(turn.amounts())
    assert expected <= quoted, (sorted(expected - quoted), turn.text)
    invented = quoted - stated([r for _, _, r in turn.calls]) - expected
    assert not invented, (sorted(invented), turn.text)
    assert case.says in turn.text, turn.text
    assert "did not understand" not in turn.text


@pytest.mark.parametrize("question", BEYOND)
def test_a_question_beyond_the_demo_says_so_and_lists_what_it_can_answer(
    year: Seeded, question: str
) -> None:
    demo = year.demo()
    demo.ask("What did I spend on groceries last month?")  # no earlier figure may leak in
    turn = demo.ask(question)
    assert "I did not understand" in turn.text, turn.text
    assert all(topic in turn.text for topic in CAN_ANSWER), turn.text
    assert turn.calls == [] and turn.amounts() == []


@pytest.mark.parametrize(("question", "english"), FOREIGN)
def test_a_question_in_another_language_gets_the_honest_note_in_that_language(
    year: Seeded, question: str, english: str
) -> None:
    turn = year.demo().ask(question)
    assert ENGLISH_ONLY in turn.text and english in turn.text, turn.text
    assert turn.calls == [] and turn.amounts() == []

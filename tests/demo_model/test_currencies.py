"""Whatever the phrasing, every amount in an answer is a figure a tool gave in that currency."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.demo_model.conftest import Seeded, Turn, figures

TEMPLATES = [
    "How much did I spend on {subject} {period}?",
    "what did i spend at {subject} {period}",
    "{subject} {period}?",
    "Spending on {subject} {period} vs {other}",
    "Compare {subject} {period} with {other}",
    "Did I spend more on {subject} {period} than {other}?",
    "Am I over budget on {subject} {period}?",
    "What were my biggest {subject} purchases {period}?",
    "How much did I spend {period}?",
    "Where did my money go {period}?",
    "How am I doing {period}?",
    "What are my account balances?",
    "Which subscriptions am I paying for?",
]
FOLLOW_UPS = [
    "And the month before?",
    "what about {subject}?",
    "And {period}?",
    "How about {other}?",
    "and in total?",
]
SUBJECTS = [
    "travel",
    "trips",
    "flights",
    "restaurants",
    "eating out",
    "dining",
    "food",
    "groceries",
    "transport",
    "Uber",
    "Amazon",
    "shopping",
    "subscriptions",
    "rent",
    "Whole Foods",
    "coffee",
    "the gym",
    "utilities",
    "Hôtel du Marais",
    "Cafe de Paris",
    "unicorns",
]
PERIODS = [
    "this year",
    "last month",
    "this month",
    "in March",
    "in February 2025",
    "in the last 30 days",
    "over the past 90 days",
    "last year",
    "since January",
    "this quarter",
    "last week",
    "in 2025",
    "the past year",
    "",
]


def check(turn: Turn) -> None:
    """Assert each quoted amount is a figure of its own currency in this turn's tool results."""
    stated: set[tuple[Decimal, str]] = set()
    for _, _, result in turn.calls:
        stated |= figures(result)
    for quoted in turn.amounts():
        assert quoted in stated, (quoted, turn.text)


TABLE = [
    template.format(subject=subject, period=period, other=other).replace("  ", " ")
    for template in TEMPLATES[:8]
    for subject, period, other in (
        ("travel", "this year", "last year"),
        ("eating out", "in March", "February"),
        ("Amazon", "last month", "the month before"),
        ("food", "in the last 30 days", "last month"),
    )
] + TEMPLATES[8:]


@pytest.mark.parametrize("question", TABLE)
def test_table_of_phrasings_never_mixes_currencies(
    year: Seeded, small_ledger: Seeded, question: str
) -> None:
    for data in (year, small_ledger):
        check(data.demo().ask(question))


@settings(max_examples=60, deadline=None)
@given(
    dataset=st.sampled_from(["year", "ledger"]),
    template=st.sampled_from(TEMPLATES),
    follow_ups=st.lists(st.sampled_from(FOLLOW_UPS), max_size=2),
    subject=st.sampled_from(SUBJECTS),
    period=st.sampled_from(PERIODS),
    other=st.sampled_from(PERIODS),
)
def test_any_conversation_never_mixes_currencies(
    year: Seeded,
    small_ledger: Seeded,
    dataset: str,
    template: str,
    follow_ups: list[str],
    subject: str,
    period: str,
    other: str,
) -> None:
    demo = (year if dataset == "year" else small_ledger).demo()
    for text in [template, *follow_ups]:
        check(demo.ask(text.format(subject=subject, period=period, other=other)))

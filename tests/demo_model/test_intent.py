"""How questions and follow-ups are read: kind, period(s), category or merchant."""

from __future__ import annotations

from datetime import date

import pytest

from demo_model.intent import resolve
from demo_model.vocabulary import names_term, names_topic

TODAY = date(2025, 9, 20)  # a Saturday

# (questions of one conversation, kind, start, end, category, term) of the last question
CASES = [
    (
        ["How much did I spend on travel this year?"],
        "spending",
        "2025-01-01",
        "2025-09-20",
        "travel",
        None,
    ),
    (
        ["What did I spend on groceries last month?"],
        "spending",
        "2025-08-01",
        "2025-08-31",
        "groceries",
        None,
    ),
    (
        ["How much did I spend eating out in March?"],
        "spending",
        "2025-03-01",
        "2025-03-31",
        "restaurants",
        None,
    ),
    (["dining in the last 30 days"], "spending", "2025-08-22", "2025-09-20", "restaurants", None),
    (["how much on flights in 2024"], "spending", "2024-01-01", "2024-12-31", "travel", None),
    (["spending on trips since February"], "spending", "2025-02-01", "2025-09-20", "travel", None),
    (["food shopping last week?"], "spending", "2025-09-08", "2025-09-14", "groceries", None),
    (
        ["What did I spend on food delivery this week?"],
        "spending",
        "2025-09-15",
        "2025-09-20",
        "restaurants",
        None,
    ),
    (
        ["How much did I spend at Whole Foods in May?"],
        "spending",
        "2025-05-01",
        "2025-05-31",
        None,
        "whole foods",
    ),
    (
        ["How much did I pay for Netflix last quarter?"],
        "spending",
        "2025-04-01",
        "2025-06-30",
        None,
        "netflix",
    ),
    (["How much did I spend yesterday?"], "spending", "2025-09-19", "2025-09-19", None, None),
    (
        ["Where did my money go in December 2024?"],
        "spending",
        "2024-12-01",
        "2024-12-31",
        None,
        None,
    ),
    # No period named: all of the history (dated once the tools say where it starts).
    (["May I see my spending?"], "spending", "2025-09-20", "2025-09-20", None, None),
    (
        ["Restaurants this month vs last?"],
        "compare",
        "2025-09-01",
        "2025-09-20",
        "restaurants",
        None,
    ),
    (
        ["Did I spend more on eating out than last month?"],
        "compare",
        "2025-09-01",
        "2025-09-20",
        "restaurants",
        None,
    ),
    (["Compare March and April"], "compare", "2025-04-01", "2025-04-30", None, None),
    # A comparison names its merchant without "at": what is left besides periods and verbs.
    (["Amazon this month vs last month"], "compare", "2025-09-01", "2025-09-20", None, "amazon"),
    (
        ["How does Uber in August compare to July?"],
        "compare",
        "2025-08-01",
        "2025-08-31",
        None,
        "uber",
    ),
    (
        ["Did my spending go up this month compared to last month?"],
        "compare",
        "2025-09-01",
        "2025-09-20",
        None,
        None,
    ),
    (
        ["Uber in the last 3 months vs the 3 months before"],
        "compare",
        "2025-06-21",
        "2025-09-20",
        None,
        "uber",
    ),
    (
        ["Am I over budget on restaurants?"],
        "budget",
        "2025-09-01",
        "2025-09-20",
        "restaurants",
        None,
    ),
    (
        ["Which subscriptions am I paying for?"],
        "recurring",
        "2025-09-01",
        "2025-09-20",
        "subscriptions",
        None,
    ),
    (["What are my account balances?"], "balances", "2025-09-01", "2025-09-20", None, None),
    (["How am I doing?"], "overview", "2025-09-01", "2025-09-20", None, None),
    (
        ["groceries last month", "And the month before?"],
        "spending",
        "2025-07-01",
        "2025-07-31",
        "groceries",
        None,
    ),
    (
        ["groceries last month", "what about restaurants?"],
        "spending",
        "2025-08-01",
        "2025-08-31",
        "restaurants",
        None,
    ),
    (
        ["groceries last month", "And last year?"],
        "spending",
        "2024-01-01",
        "2024-12-31",
        "groceries",
        None,
    ),
    (["groceries last month", "and in total?"], "spending", "2025-08-01", "2025-08-31", None, None),
    (["groceries last month", "And Uber?"], "spending", "2025-08-01", "2025-08-31", None, "uber"),
    (
        ["groceries last month", "In January?"],
        "spending",
        "2025-01-01",
        "2025-01-31",
        "groceries",
        None,
    ),
    (
        ["groceries last month", "How are my budgets?"],
        "budget",
        "2025-09-01",
        "2025-09-20",
        None,
        None,
    ),
    (
        ["restaurants this month vs last", "and groceries?"],
        "compare",
        "2025-09-01",
        "2025-09-20",
        "groceries",
        None,
    ),
    (
        ["restaurants this month vs last", "and the month before?"],
        "compare",
        "2025-08-01",
        "2025-08-31",
        "restaurants",
        None,
    ),
    (
        ["groceries last month", "write me a poem"],
        "off_topic",
        "2025-09-01",
        "2025-09-20",
        None,
        None,
    ),
    (
        ["groceries last month", "Who won the world cup in 2022?"],
        "off_topic",
        "2025-09-01",
        "2025-09-20",
        None,
        None,
    ),
    (["What's the weather this week?"], "off_topic", "2025-09-01", "2025-09-20", None, None),
    (["Tell me about cats, please"], "off_topic", "2025-09-01", "2025-09-20", None, None),
    (["Hello!"], "help", "2025-09-01", "2025-09-20", None, None),
]


@pytest.mark.parametrize(("questions", "kind", "start", "end", "category", "term"), CASES)
def test_questions_are_read_with_their_context(
    questions: list[str],
    kind: str,
    start: str,
    end: str,
    category: str | None,
    term: str | None,
) -> None:
    intent = resolve(questions, TODAY)
    assert (intent.kind, intent.category, intent.term) == (kind, category, term)
    assert (intent.period.start.isoformat(), intent.period.end.isoformat()) == (start, end)


@pytest.mark.parametrize(
    ("questions", "baseline"),
    [
        (["Restaurants this month vs last?"], ("2025-08-01", "2025-08-31")),
        (["Did I spend more on eating out than last month?"], ("2025-08-01", "2025-08-31")),
        (["Compare March and April"], ("2025-03-01", "2025-03-31")),
        (["this year vs last year"], ("2024-01-01", "2024-12-31")),
        (["restaurants this month vs last", "and the month before?"], ("2025-07-01", "2025-07-31")),
        # Nothing comes after the current year yet: it is the period, last year the baseline.
        (["Spending on travel vs this year"], ("2024-01-01", "2024-12-31")),
    ],
)
def test_comparisons_take_the_earlier_or_named_period_as_baseline(
    questions: list[str], baseline: tuple[str, str]
) -> None:
    intent = resolve(questions, TODAY)
    assert intent.baseline is not None
    assert (intent.baseline.start.isoformat(), intent.baseline.end.isoformat()) == baseline


@pytest.mark.parametrize(
    ("name", "topic", "expected"),
    [
        ("Restaurants", "restaurants", True),
        ("Dining", "restaurants", True),
        ("Eating Out", "restaurants", True),
        ("Groceries", "groceries", True),
        ("Food & Drink", "groceries", True),
        ("Travel & Holidays", "travel", True),
        ("Rent", "restaurants", False),
        ("Transfers", "transport", False),
        ("Parkview Apartments", "rent", False),
    ],
)
def test_category_names_match_topics_forgivingly(name: str, topic: str, expected: bool) -> None:
    assert names_topic(name, topic) is expected


@pytest.mark.parametrize(
    ("name", "term", "expected"),
    [
        ("Trader Joe's", "trader joes", True),
        ("Trader Joe's", "traderjoes", True),
        ("Whole Foods Market", "whole foods", True),
        ("Blue Bottle Coffee", "coffee", True),
        ("Parkview Apartments", "art", False),
        ("Uber", "ubereats", False),
    ],
)
def test_merchant_names_match_what_the_user_typed(name: str, term: str, expected: bool) -> None:
    assert names_term(name, term) is expected


@pytest.mark.parametrize(
    "question",
    [
        "May I see my spending?",
        "How much did I spend at Tesco?",
        "What's my income?",
        "Show my refunds",
        "Money in vs out",
        "Which merchants do I spend the most at?",
    ],
)
def test_a_question_naming_no_period_covers_all_history(question: str) -> None:
    assert resolve([question], TODAY).period.unit == "all"

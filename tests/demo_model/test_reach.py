"""What the demo reads as income, refunds, beyond its reach or another language, and follow-ups."""

from __future__ import annotations

from datetime import date

import pytest

from demo_model.intent import resolve
from demo_model.language import language_of
from tests.demo_model.conftest import Seeded
from tests.demo_model.oracle import Oracle, span, stated

TODAY = date(2025, 9, 20)
ALL = "all"


@pytest.mark.parametrize(
    ("question", "language"),
    [
        ("How much did I spend at Café de Flore in March?", "en"),
        ("Le Comptoir du Relais in March?", "en"),
        ("What did I spend at Hôtel du Marais?", "en"),
        ("Restaurants?", "en"),
        ("¿Y el mes anterior?", "es"),
        ("¿Cuánto gané este año?", "es"),
        ("Hola", "es"),
        ("Wie viel habe ich für Restaurants ausgegeben?", "de"),
        ("Combien ai-je dépensé ce mois-ci ?", "fr"),
        ("Сколько я потратил в прошлом месяце?", "other"),
        ("先月いくら使いましたか", "other"),
    ],
)
def test_the_language_is_told_by_its_common_words(question: str, language: str) -> None:
    assert language_of(question) == language


@pytest.mark.parametrize(
    ("question", "kind", "start", "end", "subject"),
    [
        ("How much did I earn last month?", "income", "2025-08-01", "2025-08-31", None),
        ("Was I paid this month?", "income", "2025-09-01", "2025-09-20", None),
        ("How much interest did I earn this year?", "income", "2025-01-01", "2025-09-20", None),
        ("Show my Amazon refunds", "refunds", ALL, ALL, "amazon"),
        ("How much did I get back from Amazon?", "refunds", ALL, ALL, "amazon"),
        ("Did I get any refunds in March?", "refunds", "2025-03-01", "2025-03-31", None),
        ("Any travel refunds this year?", "refunds", "2025-01-01", "2025-09-20", "travel"),
        ("my trip abroad in May", "spending", "2025-05-01", "2025-05-31", "travel"),
        ("What's my biggest expense category?", "spending", ALL, ALL, None),
        ("What will my balance be on 15 January?", "forecast", "2025-09-20", "2026-01-15", None),
        (
            "How much money will I have at the end of the month?",
            "forecast",
            "2025-09-20",
            "2025-09-30",
            None,
        ),
        (
            "Which bills are due in the next two weeks?",
            "upcoming",
            "2025-09-20",
            "2025-10-03",
            None,
        ),
        ("When is my next rent payment?", "next_payment", "2025-09-01", "2025-09-20", "rent"),
        ("Has Netflix gone up in price?", "price_changes", "2025-09-01", "2025-09-20", "netflix"),
        ("Am I on track with my budgets?", "budget", "2025-09-01", "2025-09-20", None),
        ("Show my transactions last week", "spending", "2025-09-08", "2025-09-14", None),
        ("Should I invest in index funds?", "unknown", "2025-09-01", "2025-09-20", None),
        ("Will I go over budget?", "unknown", "2025-09-01", "2025-09-20", None),
        ("Tell me about my transactions", "unknown", "2025-09-01", "2025-09-20", None),
        ("Wie hoch ist mein Kontostand?", "foreign", "2025-09-01", "2025-09-20", None),
    ],
)
def test_new_kinds_are_read_with_their_period_and_subject(
    question: str, kind: str, start: str, end: str, subject: str | None
) -> None:
    intent = resolve([question], TODAY)
    assert intent.kind == kind
    if start == ALL:  # no period named: all of the history, dated once the tools say from when
        assert intent.period.unit == "all"
    else:
        assert (intent.period.start.isoformat(), intent.period.end.isoformat()) == (start, end)
    assert intent.subject() == subject


def test_a_foreign_question_between_english_ones_keeps_the_english_context() -> None:
    questions = ["How much did I earn last month?", "¿Cuánto gané este año?", "And in July?"]
    intent = resolve(questions, TODAY)
    assert intent.kind == "income"
    assert intent.period.start == date(2025, 7, 1)


def test_an_income_follow_up_answers_the_new_month_from_the_tools(year: Seeded) -> None:
    demo = year.demo()
    demo.ask("How much did I earn last month?")
    turn = demo.ask("And in July?")
    expected = Oracle(year).income(span("2025-07-01", "2025-07-31"))
    assert turn.text.startswith("Your income in July 2025")
    assert expected <= set(turn.amounts())
    assert set(turn.amounts()) <= expected | stated([r for _, _, r in turn.calls])
    assert "transfers between your own accounts" in turn.text
    assert "Acme Corp Payroll" in turn.text


def test_refunds_of_a_month_without_any_say_so(year: Seeded) -> None:
    turn = year.demo().ask("Did I get any refunds in June?")
    assert turn.text.startswith("I found no refunds in June 2025")
    assert turn.amounts() == []


def test_income_for_a_user_without_data_says_there_is_none(empty: Seeded) -> None:
    turn = empty.demo().ask("How much did I earn last month?")
    assert "I don't see any accounts or transactions for you yet" in turn.text
    assert turn.amounts() == []

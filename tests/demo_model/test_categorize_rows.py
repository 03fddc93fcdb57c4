"""The demo model's proposals for uncategorized rows: history first, then a merchant word."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from demo_model import tool_calls as c
from demo_model.answers import compose_answer
from demo_model.categorize_rows import (
    history,
    plan_categorize,
    proposals,
    uncategorized,
    write,
)
from demo_model.change_plans import the_year
from demo_model.intent import resolve
from demo_model.tool_calls import Results

TODAY = date(2026, 11, 20)


def row(ident: int, merchant: str, amount: str = "-10.00", category: str | None = None) -> Any:
    return {
        "id": ident,
        "date": "2026-10-01",
        "amount": amount,
        "currency": "USD",
        "merchant": merchant,
        "category": category,
    }


def summary(*names: str) -> dict[str, Any]:
    groups = [{"key": n} for n in names]
    return {"currencies": [{"currency": "USD", "groups": groups}]}


def looked_up(open_rows: list[Any], names: list[str], past: dict[str, list[Any]]) -> Results:
    """The results of the first two rounds: the open rows, the names, each merchant's rows."""
    results: Results = [
        (*uncategorized(False), {"count": len(open_rows), "transactions": open_rows}),
        (*c.by_category(the_year(TODAY)), summary(*names)),
    ]
    for merchant, rows in past.items():
        results.append((*history(merchant), {"transactions": rows}))
    return results


@pytest.mark.parametrize(
    "question",
    [
        "Categorise my imported transactions",
        "sort the uncategorised rows into categories",
        "Can you categorize all of my uncategorized payments?",
        "suggest categories for my new transactions",
    ],
)
def test_bulk_requests_are_understood(question: str) -> None:
    assert resolve([question], TODAY).kind == "categorize_rows"


@pytest.mark.parametrize(
    "question",
    [
        "categorize transaction 12 as rent",
        "categorize my amazon purchases as travel",
        "sort my transactions by amount",
        "how much uncategorized spending did I have?",
    ],
)
def test_other_questions_are_not_bulk_requests(question: str) -> None:
    assert resolve([question], TODAY).kind != "categorize_rows"


def test_imported_rows_are_asked_for_when_the_question_says_so() -> None:
    intent = resolve(["Categorise my imported transactions"], TODAY)
    assert dict(intent.details) == {"imported": "true"}
    assert dict(resolve(["categorize my transactions"], TODAY).details) == {}
    name, args = uncategorized(True)
    assert (name, args["imported"], args["category"]) == ("get_transactions", True, "Uncategorized")
    year = c.by_category(the_year(TODAY))
    assert plan_categorize(TODAY, True, []) == [uncategorized(True), year]


def test_history_wins_then_a_merchant_word_and_the_rest_is_left_alone() -> None:
    open_rows = [
        row(1, "Copper Kettle"),
        row(2, "Sunrise Supermarket"),
        row(3, "Mystery Shop"),
        row(4, "Acme Payroll", "2500.00"),
        row(5, "Uber Trip"),  # "transport": no category of the user's names it
    ]
    past = {
        "Copper Kettle": [
            row(9, "Copper Kettle", category="Dining Out"),
            row(8, "Copper Kettle", category="Dining Out"),
            row(7, "Copper Kettle Annex", category="Groceries"),  # another merchant
        ],
        "Sunrise Supermarket": [],
        "Mystery Shop": [],
        "Acme Payroll": [],
        "Uber Trip": [],
    }
    results = looked_up(open_rows, ["Food & Groceries", "Dining Out", "Salary"], past)
    found = proposals(TODAY, False, results)
    assert [(p.row["id"], p.category, p.reason) for p in found] == [
        (1, "Dining Out", "history"),
        (2, "Food & Groceries", "keyword"),
        (4, "Salary", "keyword"),
    ]
    assert plan_categorize(TODAY, False, results) == [write(found)]


def test_the_lookups_come_first_and_nothing_is_written_without_a_proposal() -> None:
    year = c.by_category(the_year(TODAY))
    assert plan_categorize(TODAY, False, []) == [uncategorized(False), year]
    first = looked_up([row(3, "Mystery Shop")], ["Groceries"], {})
    assert plan_categorize(TODAY, False, first) == [history("Mystery Shop")]
    done = looked_up([row(3, "Mystery Shop")], ["Groceries"], {"Mystery Shop": []})
    assert plan_categorize(TODAY, False, done) == []
    intent = resolve(["categorise my transactions"], TODAY)
    text = compose_answer(intent, done)
    assert "could not propose a category for any of them" in text and "Mystery Shop" in text


def test_the_answer_counts_what_changed_and_what_did_not_fit() -> None:
    open_rows = [row(1, "Sunrise Supermarket"), row(2, "Mystery Shop")]
    results = looked_up(open_rows, ["Groceries"], {"Sunrise Supermarket": [], "Mystery Shop": []})
    results[0][2]["count"] = 250
    [call] = plan_categorize(TODAY, False, results)
    assert call == (
        "categorize_transactions",
        {"changes": [{"transaction_id": 1, "category": "Groceries"}]},
    )
    results.append((*call, {"count": 1, "changed": 1, "by_category": {"Groceries": 1}}))
    intent = resolve(["categorise my transactions"], TODAY)
    text = compose_answer(intent, results)
    assert text.startswith("Done: I categorized 1 transaction: 1 to **Groceries**.")
    assert "248 older uncategorized transactions did not fit in one change" in text
    assert "I left 1 transaction uncategorized" in text


def test_a_hostile_merchant_name_is_text_in_the_answer() -> None:
    open_rows = [row(1, "<img src=x onerror=alert(1)> **Shop**")]
    results = looked_up(open_rows, ["Groceries"], {open_rows[0]["merchant"]: []})
    intent = resolve(["categorise my transactions"], TODAY)
    text = compose_answer(intent, results)
    assert "\\<img src=x onerror=alert(1)> \\*\\*Shop\\*\\*" in text  # escaped Markdown
    assert "<img" not in text.replace("\\<", "")

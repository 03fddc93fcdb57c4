"""Changes the user asks for become the write tool's call, after the names are looked up."""

from __future__ import annotations

from typing import Any

from demo_model.answers import compose_answer
from demo_model.intent import resolve
from demo_model.planner import next_calls
from demo_model.tool_calls import Results
from tests.demo_model.conftest import Seeded

WRITES = ("set_budget", "categorize_transaction")


def plan(seeded: Seeded, question: str, done: Any = None) -> tuple[list[Any], str]:
    """Run the read calls for real; return the write calls planned and the answer at the end."""
    intent, tools, results = resolve([question], seeded.today), seeded.tools(), []
    results: Results = []
    for _ in range(6):
        calls = next_calls(intent, results)
        writes = [call for call in calls if call[0] in WRITES]
        if writes and done is None:
            return writes, ""
        if not calls:
            return [], compose_answer(intent, results)
        results += [(n, a, done if n in WRITES else tools(n, **a)) for n, a in calls]
    raise AssertionError("the plan never ended")


def a_transaction(seeded: Seeded, merchant: str) -> dict[str, Any]:
    """Return a transaction at `merchant` that is alone there on its day."""
    rows = seeded.tools()("get_transactions", merchant=merchant, limit=200)["transactions"]
    days = [r["date"] for r in rows]
    return next(r for r in rows if days.count(r["date"]) == 1)


def test_raising_a_budget_keeps_the_budget_s_own_currency(year: Seeded) -> None:
    writes, _ = plan(year, "Raise my groceries budget to 700")
    assert writes == [
        ("set_budget", {"category": "Groceries", "amount": "700.00", "currency": "USD"})
    ]


def test_a_budget_named_by_a_synonym_and_a_symbol(year: Seeded) -> None:
    writes, _ = plan(year, "Set my eating out budget to €350.50")
    assert writes == [
        ("set_budget", {"category": "Restaurants", "amount": "350.50", "currency": "EUR"})
    ]


def test_moving_a_transaction_by_id(year: Seeded) -> None:
    row = a_transaction(year, "Amazon")
    writes, _ = plan(year, f"Move transaction {row['id']} to Travel")
    assert writes == [
        ("categorize_transaction", {"transaction_id": row["id"], "category": "Travel"})
    ]


def test_a_payment_named_by_merchant_and_date_is_looked_up_first(year: Seeded) -> None:
    row = a_transaction(year, "Uber")
    writes, _ = plan(year, f"The Uber payment on {row['date']} is travel")
    assert writes == [
        ("categorize_transaction", {"transaction_id": row["id"], "category": "Travel"})
    ]


def test_a_write_named_by_a_verb_merchant_and_day(year: Seeded) -> None:
    row = a_transaction(year, "Amazon")
    writes, _ = plan(year, f"Categorize the Amazon purchase on {row['date']} as Travel")
    assert writes == [
        ("categorize_transaction", {"transaction_id": row["id"], "category": "Travel"})
    ]


def test_a_done_change_is_confirmed_from_what_was_set(year: Seeded) -> None:
    _, text = plan(year, "Raise my groceries budget to 700", done={"ok": True})
    assert text == "Done: your **Groceries** budget is now 700.00 USD a month."


def test_an_unknown_category_changes_nothing(year: Seeded) -> None:
    writes, text = plan(year, "Set my unicorn budget to 50 USD")
    assert writes == []
    assert text.startswith("I don't see a category called “unicorn”, so I changed nothing.")


def test_no_matching_payment_changes_nothing(year: Seeded) -> None:
    writes, text = plan(year, "The Delta payment on 2025-09-01 is groceries")
    assert writes == []
    assert text == "I found no transaction at “delta” on 2025-09-01, so I changed nothing."

"""set_budget and categorize_transaction: previews change nothing, execution changes one row."""

from __future__ import annotations

import threading
from datetime import date
from typing import Any

import pytest

from models.db import Database
from tests.backends import migrated_postgres
from tests.conftest import make_user
from tests.tools.conftest import (
    ALICE_ACCOUNTS,
    ALICE_BUDGETS,
    ALICE_CATEGORIES,
    ALICE_ROWS,
    Caller,
    budgets,
    categories,
    insert_ledger,
)
from tools.finance import FINANCE_TOOLS
from tools.finance.clock import pinned_today
from tools.registry import ClaimLost, ToolContext

WRITES = [t for t in FINANCE_TOOLS if t.side_effects]


def test_the_new_tools_are_writes_with_previews() -> None:
    assert [t.name for t in WRITES] == [
        "set_budget",
        "categorize_transaction",
        "categorize_transactions",
    ]
    for tool in WRITES:
        assert tool.preview is not None
        assert "CHANGES the user's data" in tool.description
        assert "only after the user approves" in tool.description
        assert "only when the user asked" in tool.description


# --- set_budget -------------------------------------------------------------------------


def test_preview_of_a_budget_change_describes_it_and_changes_nothing(
    call: Caller, db: Database
) -> None:
    before = budgets(db)
    preview = call.preview("set_budget", category="groceries", amount="400")
    assert preview["summary"] == (
        "Set the monthly Groceries budget from 200.00 USD to 400.00 USD (for 2025-03 the "
        "budget set for that month, 150.00 USD, still applies)"
    )
    assert preview["changes"] == [{"field": "limit", "before": "200.00 USD", "after": "400.00 USD"}]
    target = preview["target"]
    assert target["kind"] == "budget" and target["category"] == "Groceries"
    assert before[target["id"]][2:] == (None, 20000, "USD")  # the recurring row
    assert (target["overridden_in"], target["override_limit"]) == ("2025-03", "150.00 USD")
    assert budgets(db) == before


def test_preview_of_a_new_budget_has_no_id_and_no_before(call: Caller, db: Database) -> None:
    before = budgets(db)
    preview = call.preview("set_budget", category="Travel", amount="250.5", currency="eur")
    assert preview == {
        "summary": "Create a monthly Travel budget of 250.50 EUR",
        "changes": [{"field": "limit", "before": None, "after": "250.50 EUR"}],
        "target": {"kind": "budget", "id": None, "category": "Travel", "budget_type": "recurring"},
    }
    assert budgets(db) == before


def test_set_budget_updates_exactly_the_recurring_row(call: Caller, db: Database) -> None:
    before = budgets(db)
    result = call("set_budget", category="GROCERIES", amount="400")
    assert result == {
        "budget": {
            "category": "Groceries",
            "budget_type": "recurring",
            "limit": "400.00",
            "currency": "USD",
        },
        "before": "200.00",
        "changed": True,
        "note": "For 2025-03 the budget set for that month (150.00 USD) still applies; the new "
        "limit counts in every month without a budget of its own.",
    }
    after = budgets(db)
    changed = {i for i in before if before[i] != after[i]}
    assert set(after) == set(before) and len(changed) == 1
    (row,) = changed
    assert after[row][2:] == (None, 40000, "USD")
    assert call("get_budget_status", month="2025-04")["budgets"][0]["limit"] == "400.00"
    march = call("get_budget_status", month="2025-03")["budgets"][0]
    assert (march["limit"], march["budget_type"]) == ("150.00", "this_month")


def test_set_budget_creates_one_row_with_the_first_accounts_currency(
    call: Caller, db: Database, ledger_ids: dict[str, int]
) -> None:
    before = budgets(db)
    result = call("set_budget", category="travel", amount="0.5")
    assert (result["before"], result["budget"]["limit"], result["budget"]["currency"]) == (
        None,
        "0.50",
        "USD",
    )
    assert "note" not in result
    after = budgets(db)
    (new,) = set(after) - set(before)
    assert {i: after[i] for i in before} == before
    assert after[new][0] == ledger_ids["alice"] and after[new][2:] == (None, 50, "USD")


def test_setting_the_same_budget_twice_changes_nothing_the_second_time(
    call: Caller, db: Database
) -> None:
    assert call("set_budget", category="Rent", amount="1600")["changed"] is True
    settled = budgets(db)
    preview = call.preview("set_budget", category="Rent", amount="1600.00", currency="USD")
    assert preview["changes"] == []
    assert preview["summary"] == "Keep the monthly Rent budget at 1600.00 USD, as it already is"
    again = call("set_budget", category="Rent", amount="1600.00")
    assert (again["before"], again["changed"]) == ("1600.00", False)
    assert budgets(db) == settled


def test_a_new_currency_replaces_the_old_one(call: Caller) -> None:
    result = call("set_budget", category="Restaurants", amount="90", currency="EUR")
    assert result["before"] == "100.00" and result["before_currency"] == "USD"
    assert result["budget"]["currency"] == "EUR"


def test_a_currency_without_decimals_refuses_cents(call: Caller, db: Database) -> None:
    before = budgets(db)
    error = call.error("set_budget", category="Travel", amount="400.50", currency="JPY")
    assert error == "Invalid input for field 'amount': JPY amounts have no decimals; round 400.50."
    assert call("set_budget", category="Travel", amount="400", currency="jpy")["budget"] == {
        "category": "Travel",
        "budget_type": "recurring",
        "limit": "400",
        "currency": "JPY",
    }
    assert len(budgets(db)) == len(before) + 1


@pytest.mark.parametrize(
    ("amount", "hint"),
    [
        ("0", "greater than 0"),
        ("0.00", "greater than 0"),
        ("-5", "greater than 0"),
        ("1.234", "at most 2 decimals"),
        ("100000000", "at most 99999999.99"),
        ("abc", 'use a decimal string such as "400"'),
        ("1e3", 'use a decimal string such as "400"'),
        (400, 'use a decimal string such as "400"'),
        (4.5, 'use a decimal string such as "400"'),
    ],
)
def test_bad_amounts_are_refused_with_the_fix(
    call: Caller, db: Database, amount: Any, hint: str
) -> None:
    before = budgets(db)
    for run in (call.error, call.preview_error):
        error = run("set_budget", category="Groceries", amount=amount)
        assert error.startswith("Invalid tool input. Fix these fields and call the tool again:")
        assert "'amount':" in error and hint in error, error
    assert budgets(db) == before


@pytest.mark.parametrize(
    ("category", "message"),
    [
        (
            "Pets",
            "unknown expense category 'Pets'. Use one of: Groceries, Rent, Restaurants, "
            "Subscriptions, Travel.",
        ),
        (
            "salary",
            "'Salary' is an income category; budgets limit spending, so use an expense "
            "category: Groceries, Rent, Restaurants, Subscriptions, Travel.",
        ),
        ("Hobbies", "unknown expense category 'Hobbies'."),  # Bob's
    ],
)
def test_a_budget_needs_one_of_the_users_expense_categories(
    call: Caller, db: Database, category: str, message: str
) -> None:
    before = budgets(db)
    for run in (call.error, call.preview_error):
        error = run("set_budget", category=category, amount="10")
        assert error.startswith(f"Invalid input for field 'category': {message}")
    assert budgets(db) == before


def test_budget_month_override_is_only_the_current_months(call: Caller) -> None:
    with pinned_today(date(2025, 4, 2)):
        preview = call.preview("set_budget", category="Groceries", amount="300")
    assert "still applies" not in preview["summary"]
    assert "overridden_in" not in preview["target"]


# --- categorize_transaction -------------------------------------------------------------


def test_preview_of_a_recategorization_describes_it_and_changes_nothing(
    call: Caller, db: Database
) -> None:
    before = categories(db)
    preview = call.preview("categorize_transaction", transaction_id=21, category="restaurants")
    assert preview == {
        "summary": "Move the 82.45 USD Whole Foods Market transaction of 2025-03-14 from "
        "Groceries to Restaurants",
        "changes": [{"field": "category", "before": "Groceries", "after": "Restaurants"}],
        "target": {
            "kind": "transaction",
            "id": 21,
            "date": "2025-03-14",
            "amount": "-82.45",
            "currency": "USD",
            "merchant": "Whole Foods Market",
            "description": "Whole Foods Market purchase",
            "category": "Groceries",
            "account": "Visa",
            "pending": True,
        },
    }
    assert categories(db) == before


def test_categorize_changes_exactly_that_transaction(call: Caller, db: Database) -> None:
    before = categories(db)
    result = call("categorize_transaction", transaction_id=13, category="GROCERIES")
    assert (result["before"], result["changed"]) == (None, True)
    assert result["transaction"]["category"] == "Groceries"
    assert result["transaction"]["merchant"] == "Corner Store"
    after = categories(db)
    assert {i for i in before if before[i] != after[i]} == {13}
    assert after[13] == before[3]  # Groceries' id
    shown = call("get_transactions", category="groceries", start_date="2025-02-20")
    assert 13 in [row["id"] for row in shown["transactions"]]


def test_an_uncategorized_transaction_moves_from_uncategorized(call: Caller) -> None:
    preview = call.preview("categorize_transaction", transaction_id=13, category="Rent")
    assert preview["summary"].endswith("of 2025-02-20 from Uncategorized to Rent")
    assert preview["changes"] == [{"field": "category", "before": None, "after": "Rent"}]
    call("categorize_transaction", transaction_id=13, category="Rent")
    again = call.preview("categorize_transaction", transaction_id=13, category="rent")
    assert again["changes"] == [] and again["summary"].startswith("Keep the 19.99 USD")
    assert call("categorize_transaction", transaction_id=13, category="rent")["changed"] is False


def test_any_kind_of_category_is_allowed(call: Caller) -> None:
    result = call("categorize_transaction", transaction_id=15, category="salary")
    assert (result["before"], result["transaction"]["category"]) == ("Transfers", "Salary")


def test_unknown_category_lists_the_users_own(call: Caller, db: Database) -> None:
    before = categories(db)
    for run in (call.error, call.preview_error):
        error = run("categorize_transaction", transaction_id=21, category="Hobbies")
        assert error == (
            "Invalid input for field 'category': unknown category 'Hobbies'. Use one of: "
            "Groceries, Rent, Restaurants, Salary, Subscriptions, Transfers, Travel."
        )
    assert categories(db) == before


def test_another_users_transaction_is_not_there(
    call: Caller, db: Database, ledger_ids: dict[str, int]
) -> None:
    bob = call.as_user(ledger_ids["bob"])
    before = categories(db)
    for caller, ident in ((bob, 21), (call, 22), (call, 9999)):
        for run in (caller.error, caller.preview_error):
            error = run("categorize_transaction", transaction_id=ident, category="Groceries")
            assert error == (
                f"Invalid input for field 'transaction_id': No transaction {ident} among yours."
            )
    assert categories(db) == before
    assert bob("categorize_transaction", transaction_id=22, category="hobbies")["changed"]
    assert {i for i in before if before[i] != categories(db)[i]} == {22}


# --- PostgreSQL: concurrent calls ---------------------------------------------------------


WRITE_CALLS = [
    ("set_budget", {"category": "Groceries", "amount": "400"}),
    ("categorize_transaction", {"transaction_id": 13, "category": "Groceries"}),
]


@pytest.mark.parametrize(("name", "tool_input"), WRITE_CALLS, ids=[n for n, _ in WRITE_CALLS])
def test_a_write_records_its_result_in_its_own_transaction(
    call: Caller, db: Database, name: str, tool_input: dict[str, Any]
) -> None:
    """The receipt sees the very blocks the model reads, once, inside the write's session."""
    receipts: list[tuple[Any, list[dict[str, Any]]]] = []

    def receipt(s: Any, blocks: list[dict[str, Any]]) -> bool:
        receipts.append((s.in_transaction(), blocks))
        return True

    ctx = ToolContext(call.user_id, db, "toolu_w", "turn_w", receipt)
    outcome = call.registry.execute(name, tool_input, ctx)
    assert not outcome.is_error, outcome.content
    assert receipts == [(True, outcome.blocks())]


@pytest.mark.parametrize(("name", "tool_input"), WRITE_CALLS, ids=[n for n, _ in WRITE_CALLS])
def test_a_write_whose_claim_was_lost_is_rolled_back(
    call: Caller, db: Database, name: str, tool_input: dict[str, Any]
) -> None:
    """Fenced out as it commits: the change never happens and no result is made up for it."""
    before = (budgets(db), categories(db))
    ctx = ToolContext(call.user_id, db, "toolu_w", "turn_w", lambda s, blocks: False)
    with pytest.raises(ClaimLost):
        call.registry.execute(name, tool_input, ctx)
    assert (budgets(db), categories(db)) == before


def test_concurrent_writes_of_one_budget_leave_one_row_in_order_on_postgres() -> None:
    with migrated_postgres() as url:
        pg = Database(url)
        try:
            alice = make_user(pg, "alice")[0]
            insert_ledger(pg, alice, ALICE_ACCOUNTS, ALICE_CATEGORIES, ALICE_ROWS, ALICE_BUDGETS)
            caller, start = Caller(pg, alice), threading.Barrier(6)
            results: list[dict[str, Any]] = []

            def create(amount: str) -> None:
                start.wait()
                results.append(caller("set_budget", category="Travel", amount=amount))

            threads = [threading.Thread(target=create, args=(f"{n}0",)) for n in range(1, 7)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            assert len(results) == 6
            assert sum(r["before"] is None for r in results) == 1
            assert len(budgets(pg)) == len(ALICE_BUDGETS) + 1
            status = {b["category"]: b for b in caller("get_budget_status")["budgets"]}
            final = status["Travel"]["limit"]
            # The writes were serialized: each `before` is the limit of the write before it.
            befores = {r["before"] for r in results} - {None}
            assert befores == {r["budget"]["limit"] for r in results} - {final}
        finally:
            pg.dispose()

"""A tool only ever sees the calling user's data, whatever the model passes."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import delete, select

from models import Account, Budget, Category, Transaction, User
from models.db import Database
from tests.tools.conftest import Caller, ids

BOB_ONLY = (
    "999.99",
    "22.22",
    "777.77",
    "42.42",
    "9999.00",
    "Secret Bonus",
    "Bob Savings",
    "Hobbies",
    "GBP",
)


def assert_no_bob(result: object) -> None:
    text = json.dumps(result)
    for marker in BOB_ONLY:
        assert marker not in text, marker


def test_every_tool_answers_with_alice_data_only(call: Caller) -> None:
    results = [
        call("get_transactions", limit=200),
        call("get_transactions", merchant="whole"),
        call("get_transactions", category="groceries", sort="amount_desc"),
        call("get_spending_summary", start_date="2000-01-01", end_date="2099-12-31"),
        call(
            "get_spending_summary",
            start_date="2000-01-01",
            end_date="2099-12-31",
            group_by="merchant",
        ),
        call("get_account_balances"),
        call("get_budget_status"),
        call(
            "compare_spending",
            period_a_start="2025-01-01",
            period_a_end="2025-01-31",
            period_b_start="2025-02-01",
            period_b_end="2025-03-31",
        ),
        call("find_recurring_payments"),
    ]
    for result in results:
        assert_no_bob(result)
    assert max(ids(results[0])) == 21  # Bob's rows are 22..26
    assert ids(results[1]) == [21, 10, 7, 3]
    assert [r["merchant"] for r in results[-1]["recurring"]] == ["Landlord LLC", "Netflix"]


def test_bob_sees_only_his_own(call: Caller, ledger_ids: dict[str, int]) -> None:
    bob = call.as_user(ledger_ids["bob"])
    rows = bob("get_transactions", sort="date_asc")
    assert ids(rows) == [22, 23, 24, 25, 26]
    assert [t["currency"] for t in rows["totals"]] == ["GBP", "USD"]
    assert [a["name"] for a in bob("get_account_balances")["accounts"]] == [
        "Checking",
        "Bob Savings",
    ]
    (netflix,) = bob("find_recurring_payments")["recurring"]
    assert netflix["typical_amount"] == "22.22"
    status = bob("get_budget_status")
    assert [(b["category"], b["limit"]) for b in status["budgets"]] == [
        ("Groceries", "5.00"),
        ("Hobbies", "1.00"),
    ]


@pytest.mark.parametrize(
    ("field", "value"),
    [("category", "Hobbies"), ("account", "Bob Savings")],
)
def test_names_of_other_users_are_unknown(call: Caller, field: str, value: str) -> None:
    error = call.error("get_transactions", **{field: value})
    assert f"Invalid input for field '{field}'" in error
    listed = error.split("Use one of:")[1]
    assert "Hobbies" not in listed
    assert "Bob Savings" not in listed


def test_same_names_resolve_to_the_callers_rows(call: Caller, ledger_ids: dict[str, int]) -> None:
    # Both users have a "Checking" account and a "Groceries" category.
    alice = call("get_transactions", account="checking", category="groceries")
    assert alice["count"] == 0
    bob = call.as_user(ledger_ids["bob"])(
        "get_transactions", account="checking", category="groceries"
    )
    assert ids(bob) == [24]


def test_user_id_cannot_be_passed(call: Caller, ledger_ids: dict[str, int]) -> None:
    for tool in (
        "get_transactions",
        "get_account_balances",
        "get_budget_status",
        "find_recurring_payments",
    ):
        error = call.error(tool, user_id=ledger_ids["bob"])
        assert "'user_id': Unknown field." in error


def test_cursor_minted_for_alice_is_refused_for_bob(
    call: Caller, ledger_ids: dict[str, int]
) -> None:
    page = call("get_transactions", limit=2, sort="date_asc")
    bob = call.as_user(ledger_ids["bob"])
    error = bob.error("get_transactions", limit=2, sort="date_asc", cursor=page["next_cursor"])
    assert "Invalid input for field 'cursor'" in error
    assert "different query" in error


def test_forged_cursor_for_bob_still_shows_only_bob(
    call: Caller, ledger_ids: dict[str, int]
) -> None:
    # Even a cursor Bob mints himself positions only within his own rows.
    bob = call.as_user(ledger_ids["bob"])
    first = bob("get_transactions", limit=1, sort="date_asc")
    rest = bob("get_transactions", limit=200, sort="date_asc", cursor=first["next_cursor"])
    assert ids(first) + ids(rest) == [22, 23, 24, 25, 26]
    assert rest["count"] == 5


def test_deleting_a_user_deletes_only_their_finances(
    call: Caller, db: Database, ledger_ids: dict[str, int]
) -> None:
    with db.transaction() as s:
        s.execute(delete(User).where(User.id == ledger_ids["bob"]))
    with db.transaction() as s:
        for model in (Account, Category, Transaction, Budget):
            owners = set(s.scalars(select(model.user_id)))
            assert owners == {ledger_ids["alice"]}, model.__name__
    assert call("get_transactions")["count"] == 21


def test_deleting_a_category_leaves_its_transactions_uncategorized(
    call: Caller, db: Database
) -> None:
    with db.transaction() as s:
        s.execute(delete(Category).where(Category.name == "Travel"))  # Bob has none: Alice's only
        s.execute(delete(Category).where(Category.name == "Restaurants"))
    assert call("get_transactions", category="uncategorized")["count"] == 6
    assert [b["category"] for b in call("get_budget_status")["budgets"]] == [
        "Groceries",
        "Rent",
        "Subscriptions",
    ]

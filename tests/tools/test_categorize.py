"""categorize_transactions: one approved batch, all of it or nothing, only the user's rows."""

from __future__ import annotations

import threading
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
    categories,
    insert_ledger,
)
from tools.finance.categorize import PREVIEW_ROWS
from tools.finance.inputs import MAX_CATEGORIZE
from tools.registry import ClaimLost, ToolContext


def moves(*pairs: tuple[int, str]) -> list[dict[str, Any]]:
    return [{"transaction_id": i, "category": c} for i, c in pairs]


def test_preview_lists_the_batch_and_changes_nothing(call: Caller, db: Database) -> None:
    before = categories(db)
    preview = call.preview(
        "categorize_transactions", changes=moves((13, "groceries"), (21, "Groceries"), (5, "Rent"))
    )
    assert preview["summary"] == (
        "Categorize 2 transactions: 1 to Groceries, 1 to Rent (1 already there)"
    )
    assert preview["changes"] == [
        {
            "field": "2025-02-20 Corner Store -19.99 USD (id 13)",
            "before": "Uncategorized",
            "after": "Groceries",
        },
        {
            "field": "2025-01-20 Pizza Place -36.00 USD (id 5)",
            "before": "Restaurants",
            "after": "Rent",
        },
    ]
    assert preview["target"] == {"kind": "transactions", "ids": [13, 21, 5]}
    assert categories(db) == before


def test_the_batch_changes_exactly_its_rows(call: Caller, db: Database) -> None:
    before = categories(db)
    result = call(
        "categorize_transactions",
        changes=moves((13, "Groceries"), (5, "travel"), (21, "Groceries")),
    )
    assert (result["count"], result["changed"]) == (3, 2)
    assert result["by_category"] == {"Groceries": 1, "Travel": 1}
    assert result["transactions"][0] == {"id": 13, "before": None, "after": "Groceries"}
    after = categories(db)
    assert {i for i in before if before[i] != after[i]} == {5, 13}
    assert after[13] == before[3]  # Groceries' id
    again = call("categorize_transactions", changes=moves((13, "Groceries")))
    assert again["changed"] == 0 and categories(db) == after


def test_the_long_batch_lists_its_first_rows(call: Caller) -> None:
    changes = moves(*((i, "Travel") for i in range(1, 22)))
    preview = call.preview("categorize_transactions", changes=changes)
    assert len(preview["changes"]) == PREVIEW_ROWS
    assert preview["summary"].startswith("Categorize 21 transactions: 21 to Travel")
    assert preview["summary"].endswith(f"the first {PREVIEW_ROWS} are listed")


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            moves((13, "Hobbies"), (5, "Pets"), (4, "hobbies")),
            "Invalid input for field 'changes': unknown category 'Hobbies', 'Pets'. Use one "
            "of: Groceries, Rent, Restaurants, Salary, Subscriptions, Transfers, Travel.",
        ),
        (
            moves((13, "Rent"), (13, "Travel")),
            "Invalid input for field 'changes': each transaction once; repeated: 13.",
        ),
        (
            moves((13, "Rent"), (22, "Rent"), (9999, "Rent")),
            "Invalid input for field 'changes': No transactions 22, 9999 among yours.",
        ),
    ],
    ids=["unknown category", "repeated id", "not yours"],
)
def test_a_bad_batch_is_refused_whole(
    call: Caller, db: Database, changes: list[dict[str, Any]], message: str
) -> None:
    before = categories(db)
    for run in (call.error, call.preview_error):
        assert run("categorize_transactions", changes=changes) == message
    assert categories(db) == before


def test_another_users_rows_are_refused_by_id(
    call: Caller, db: Database, ledger_ids: dict[str, int]
) -> None:
    bob = call.as_user(ledger_ids["bob"])
    before = categories(db)
    error = bob.error("categorize_transactions", changes=moves((22, "Hobbies"), (13, "Hobbies")))
    assert error == "Invalid input for field 'changes': No transactions 13 among yours."
    assert categories(db) == before


@pytest.mark.parametrize(
    "changes",
    [[], moves(*((i, "Rent") for i in range(1, MAX_CATEGORIZE + 2))), [{"transaction_id": 13}]],
    ids=["empty", "too many", "no category"],
)
def test_malformed_input_is_an_error_the_model_reads(
    call: Caller, db: Database, changes: list[dict[str, Any]]
) -> None:
    before = categories(db)
    error = call.error("categorize_transactions", changes=changes)
    assert error.startswith("Invalid tool input") and "'changes'" in error
    assert categories(db) == before


def test_the_batch_and_its_record_commit_together(call: Caller, db: Database) -> None:
    """A claim lost as it commits rolls the whole batch back; a kept one records it once."""
    before = categories(db)
    lost = ToolContext(call.user_id, db, "toolu_b", "turn_b", lambda s, blocks: False)
    with pytest.raises(ClaimLost):
        call.registry.execute("categorize_transactions", {"changes": moves((13, "Rent"))}, lost)
    assert categories(db) == before
    receipts: list[bool] = []

    def receipt(s: Any, blocks: list[dict[str, Any]]) -> bool:
        receipts.append(s.in_transaction())
        return True

    kept = ToolContext(call.user_id, db, "toolu_b", "turn_b", receipt)
    outcome = call.registry.execute(
        "categorize_transactions", {"changes": moves((13, "Rent"))}, kept
    )
    assert not outcome.is_error and receipts == [True]
    assert categories(db)[13] == before[1]  # Rent's id


def test_the_tool_needs_approval(call: Caller) -> None:
    tool = call.registry.get("categorize_transactions")
    assert tool is not None and tool.side_effects and tool.preview is not None
    assert "only after the user approves" in tool.description


def test_overlapping_batches_are_serialized_on_postgres() -> None:
    """Batches sharing rows, in opposite orders, wait for each other: none deadlocks or is lost."""
    with migrated_postgres() as url:
        pg = Database(url)
        try:
            alice = make_user(pg, "alice")[0]
            insert_ledger(pg, alice, ALICE_ACCOUNTS, ALICE_CATEGORIES, ALICE_ROWS, ALICE_BUDGETS)
            caller, start = Caller(pg, alice), threading.Barrier(4)
            results: list[dict[str, Any]] = []
            names = ("Travel", "Rent", "Travel", "Rent")
            rows = [list(range(1, 22)), list(range(21, 0, -1))] * 2

            def run(category: str, ids: list[int]) -> None:
                start.wait()
                changes = moves(*((i, category) for i in ids))
                results.append(caller("categorize_transactions", changes=changes))

            threads = [threading.Thread(target=run, args=a) for a in zip(names, rows, strict=True)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            assert len(results) == 4
            final = set(categories(pg).values())
            assert len(final) == 1, "every row ends in the category of the batch that ran last"
            # Each batch after the first saw every row as one whole batch before it left them.
            seen = [{t["before"] for t in r["transactions"]} for r in results]
            assert sum(len(befores) > 1 for befores in seen) == 1, seen
        finally:
            pg.dispose()

"""A small hand-built ledger for two users, and helpers that call tools through the registry."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date
from typing import Any

import pytest
from sqlalchemy import select

from models.db import Database
from models.finance import Account, Budget, Category, Transaction
from tests.conftest import make_user
from tools.finance import FINANCE_TOOLS
from tools.finance.clock import pinned_today
from tools.registry import ToolContext, ToolOutcome, ToolRegistry

TODAY = date(2025, 3, 15)

# Alice's transactions; ids are assigned 1..21 in this order.
# (day, account, amount_minor, currency, merchant, category, pending)
ALICE_ROWS = [
    ("2025-01-01", "Checking", -150000, "USD", "Landlord LLC", "Rent", False),  # 1
    ("2025-01-05", "Visa", -1549, "USD", "Netflix", "Subscriptions", False),  # 2
    ("2025-01-07", "Visa", -8245, "USD", "Whole Foods Market", "Groceries", False),  # 3
    ("2025-01-14", "Visa", -4510, "USD", "Trader Joe's", "Groceries", False),  # 4
    ("2025-01-20", "Visa", -3600, "USD", "Pizza Place", "Restaurants", False),  # 5
    ("2025-01-25", "Checking", 400000, "USD", "Acme Payroll", "Salary", False),  # 6
    ("2025-01-28", "Visa", 2000, "USD", "Whole Foods Market", "Groceries", False),  # 7 refund
    ("2025-02-01", "Checking", -150000, "USD", "Landlord LLC", "Rent", False),  # 8
    ("2025-02-05", "Visa", -1549, "USD", "Netflix", "Subscriptions", False),  # 9
    ("2025-02-09", "Visa", -9120, "USD", "Whole Foods Market", "Groceries", False),  # 10
    ("2025-02-14", "Visa", -7800, "USD", "Pizza Place", "Restaurants", False),  # 11
    ("2025-02-14", "Euro Card", -4500, "EUR", "Cafe de Paris", "Restaurants", False),  # 12
    ("2025-02-20", "Checking", -1999, "USD", "Corner Store", None, False),  # 13
    ("2025-02-25", "Checking", 400000, "USD", "Acme Payroll", "Salary", False),  # 14
    ("2025-02-26", "Checking", -50000, "USD", "Transfer to savings", "Transfers", False),  # 15
    ("2025-03-01", "Checking", -150000, "USD", "Landlord LLC", "Rent", False),  # 16
    ("2025-03-05", "Visa", -1549, "USD", "Netflix", "Subscriptions", False),  # 17
    ("2025-03-08", "Visa", -6375, "USD", "Trader Joe's", "Groceries", False),  # 18
    ("2025-03-12", "Euro Card", -3500, "EUR", "Cafe de Paris", "Restaurants", False),  # 19
    ("2025-03-14", "Visa", -2599, "USD", "Pizza Place", "Restaurants", True),  # 20
    ("2025-03-14", "Visa", -8245, "USD", "Whole Foods Market", "Groceries", True),  # 21
]
ALICE_ACCOUNTS = [
    ("Checking", "checking", "USD", 100000),
    ("Visa", "credit_card", "USD", -25075),
    ("Euro Card", "credit_card", "EUR", -8000),
]
ALICE_CATEGORIES = [
    ("Salary", "income"),
    ("Transfers", "transfer"),
    ("Rent", "expense"),
    ("Groceries", "expense"),
    ("Restaurants", "expense"),
    ("Subscriptions", "expense"),
    ("Travel", "expense"),
]
# (category, month or None, limit_minor)
ALICE_BUDGETS = [
    ("Groceries", None, 20000),
    ("Groceries", date(2025, 3, 1), 15000),
    ("Restaurants", None, 10000),
    ("Rent", None, 150000),
    ("Subscriptions", None, 1000),
]
BOB_ROWS = [
    ("2025-01-05", "Checking", -2222, "USD", "Netflix", "Subscriptions", False),
    ("2025-02-05", "Checking", -2222, "USD", "Netflix", "Subscriptions", False),
    ("2025-02-10", "Checking", -99999, "USD", "Whole Foods Market", "Groceries", False),
    ("2025-03-05", "Checking", -2222, "USD", "Netflix", "Subscriptions", False),
    ("2025-03-10", "Bob Savings", 77777, "GBP", "Secret Bonus", "Hobbies", True),
]
BOB_ACCOUNTS = [("Checking", "checking", "USD", 999900), ("Bob Savings", "savings", "GBP", 4242)]
BOB_CATEGORIES = [("Groceries", "expense"), ("Subscriptions", "expense"), ("Hobbies", "expense")]
BOB_BUDGETS = [("Groceries", None, 500), ("Hobbies", date(2025, 3, 1), 100)]


def insert_ledger(
    db: Database,
    user_id: int,
    accounts: list[tuple[str, str, str, int]],
    categories: list[tuple[str, str]],
    rows: list[tuple[Any, ...]],
    budgets: list[tuple[str, date | None, int]],
) -> None:
    """Insert one user's accounts, categories, transactions and budgets, in list order."""
    with db.transaction() as s:
        accts = {
            n: Account(user_id=user_id, name=n, kind=k, currency=c, balance_minor=b)
            for n, k, c, b in accounts
        }
        cats = {n: Category(user_id=user_id, name=n, kind=k) for n, k in categories}
        s.add_all([*accts.values(), *cats.values()])
        s.flush()
        for day, account, amount, cur, merchant, category, pending in rows:
            s.add(
                Transaction(
                    user_id=user_id,
                    account=accts[account],
                    posted_on=date.fromisoformat(day),
                    amount_minor=amount,
                    currency=cur,
                    merchant=merchant,
                    description=f"{merchant} purchase",
                    category=cats[category] if category else None,
                    pending=pending,
                )
            )
            s.flush()  # ids follow list order
        for category, month, limit in budgets:
            s.add(
                Budget(
                    user_id=user_id,
                    category=cats[category],
                    month=month,
                    limit_minor=limit,
                    currency="USD",
                )
            )


@pytest.fixture
def ledger_ids(db: Database, user: tuple[int, str]) -> dict[str, int]:
    """Alice (the `user` fixture) and Bob with their hand-built finances; returns their ids."""
    alice = user[0]
    bob = make_user(db, "bob")[0]
    insert_ledger(db, alice, ALICE_ACCOUNTS, ALICE_CATEGORIES, ALICE_ROWS, ALICE_BUDGETS)
    insert_ledger(db, bob, BOB_ACCOUNTS, BOB_CATEGORIES, BOB_ROWS, BOB_BUDGETS)
    return {"alice": alice, "bob": bob}


@pytest.fixture(autouse=True)
def frozen_today() -> Iterator[date]:
    """Every finance test runs on 2025-03-15 unless it pins another day."""
    with pinned_today(TODAY) as day:
        yield day


class Caller:
    """Runs tools through the real registry, as the engine does."""

    def __init__(self, db: Database, user_id: int) -> None:
        self.registry = ToolRegistry(FINANCE_TOOLS)
        self.db, self.user_id = db, user_id

    def as_user(self, user_id: int) -> Caller:
        """Return a caller acting for another user."""
        return Caller(self.db, user_id)

    def __call__(self, name: str, **tool_input: Any) -> dict[str, Any]:
        """Run a tool that must succeed and return its decoded JSON result."""
        return json.loads(self.outcome(name, **tool_input).content)

    def outcome(self, name: str, **tool_input: Any) -> ToolOutcome:
        """Run a tool that must succeed and return its whole outcome, search results too."""
        outcome = self.registry.execute(name, tool_input, ToolContext(self.user_id, self.db))
        assert not outcome.is_error, outcome.content
        return outcome

    def preview(self, name: str, **tool_input: Any) -> dict[str, Any]:
        """Preview a tool that must accept its input and return the preview."""
        result = self.registry.preview(name, tool_input, ToolContext(self.user_id, self.db))
        assert isinstance(result, dict), result
        return result

    def preview_error(self, name: str, **tool_input: Any) -> str:
        """Preview a tool that must refuse its input and return the error text."""
        result = self.registry.preview(name, tool_input, ToolContext(self.user_id, self.db))
        assert isinstance(result, ToolOutcome) and result.is_error, result
        return result.content

    def error(self, name: str, **tool_input: Any) -> str:
        """Run a tool that must fail and return the error text."""
        outcome = self.registry.execute(name, tool_input, ToolContext(self.user_id, self.db))
        assert outcome.is_error, outcome.content
        return outcome.content


def budgets(db: Database) -> dict[int, tuple[Any, ...]]:
    """Every budget row of every user, by id."""
    with db.read() as s:
        rows = s.scalars(select(Budget)).all()
        return {b.id: (b.user_id, b.category_id, b.month, b.limit_minor, b.currency) for b in rows}


def categories(db: Database) -> dict[int, int | None]:
    """Every transaction's category id, by transaction id."""
    with db.read() as s:
        return {i: c for i, c in s.execute(select(Transaction.id, Transaction.category_id))}


@pytest.fixture
def call(db: Database, ledger_ids: dict[str, int]) -> Caller:
    """A caller acting for Alice on the hand-built ledger."""
    return Caller(db, ledger_ids["alice"])


def ids(result: dict[str, Any]) -> list[int]:
    """Return the transaction ids of a get_transactions result, in order."""
    return [row["id"] for row in result["transactions"]]


ALL_IDS = list(range(1, 22))

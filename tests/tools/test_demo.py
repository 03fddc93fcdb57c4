"""The demo generator: deterministic, idempotent per user, and realistic enough for the tools."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal
from typing import Any

from flask import Flask
from sqlalchemy import func, select

from demo_data import seed_finance
from demo_data.catalog import ACCOUNTS, GROCERS, SUBSCRIPTIONS
from demo_data.commands import seed_demo
from models import User
from models.db import Database
from models.finance import Account, Budget, Category, Transaction
from tests.conftest import make_user
from tests.tools.conftest import Caller
from tools.finance.clock import pinned_today

DAY = date(2025, 6, 15)


def dump(db: Database, user_id: int) -> str:
    """Return every finance row of a user, without surrogate keys, as one string."""
    with db.transaction() as s:
        txs = s.execute(
            select(
                Transaction.posted_on, Account.name, Transaction.amount_minor, Transaction.currency,
                Transaction.merchant, Transaction.description, Category.name, Transaction.pending,
            )
            .join(Account, Account.id == Transaction.account_id)
            .outerjoin(Category, Category.id == Transaction.category_id)
            .where(Transaction.user_id == user_id)
            .order_by(Transaction.id)
        ).all()  # fmt: skip
        accounts = s.execute(
            select(Account.name, Account.kind, Account.currency, Account.balance_minor)
            .where(Account.user_id == user_id)
            .order_by(Account.id)
        ).all()
        categories = s.execute(
            select(Category.name, Category.kind)
            .where(Category.user_id == user_id)
            .order_by(Category.id)
        ).all()
        budgets = s.execute(
            select(Category.name, Budget.month, Budget.limit_minor, Budget.currency)
            .join(Category, Category.id == Budget.category_id)
            .where(Budget.user_id == user_id)
            .order_by(Budget.id)
        ).all()
    return repr([list(map(tuple, part)) for part in (accounts, categories, budgets, txs)])


def seeded(db: Database, name: str, **kwargs: Any) -> tuple[int, dict[str, Any]]:
    user_id = make_user(db, name)[0]
    return user_id, seed_finance(db, user_id, today=DAY, **kwargs)


def test_same_seed_same_rows_different_seed_different_rows(db: Database) -> None:
    a, summary_a = seeded(db, "a")
    b, summary_b = seeded(db, "b")
    c, _ = seeded(db, "c", seed=7)
    assert dump(db, a) == dump(db, b)
    assert {**summary_a, "user_id": 0} == {**summary_b, "user_id": 0}
    assert dump(db, a) != dump(db, c)
    assert len(dump(db, a)) > 10_000


def test_reseeding_replaces_only_that_users_data(db: Database) -> None:
    a, first = seeded(db, "a")
    b, _ = seeded(db, "b", seed=3)
    before_b = dump(db, b)
    again = seed_finance(db, a, today=DAY)
    assert again == first
    assert dump(db, b) == before_b
    with db.transaction() as s:
        count = s.scalar(
            select(func.count()).select_from(Transaction).where(Transaction.user_id == a)
        )
        accounts = s.scalar(select(func.count()).select_from(Account).where(Account.user_id == a))
    assert count == first["transactions"]
    assert accounts == 4
    shorter = seed_finance(db, a, months=2, today=DAY)
    assert shorter["start_date"] == "2025-05-01"
    assert shorter["transactions"] < first["transactions"]


def test_summary_of_eighteen_months(db: Database) -> None:
    _, summary = seeded(db, "a")
    assert summary["start_date"] == "2024-01-01"
    assert summary["end_date"] == "2025-06-15"
    assert summary["travel_month"] == "2024-12"
    assert summary["currencies"] == ["EUR", "USD"]
    assert summary["accounts"] == 4
    assert summary["budgets"] == 8
    assert 1 <= summary["pending"] <= 8
    assert summary["refunds"] >= 2
    assert 450 <= summary["transactions"] <= 1100


def test_default_today_comes_from_the_clock(db: Database) -> None:
    user_id = make_user(db, "a")[0]
    with pinned_today(date(2024, 2, 29)):
        summary = seed_finance(db, user_id, months=1)
    assert summary["end_date"] == "2024-02-29"
    assert summary["start_date"] == "2024-02-01"


def test_subscriptions_are_found_by_the_recurring_tool(db: Database) -> None:
    user_id, _ = seeded(db, "a")
    with pinned_today(DAY):
        found = Caller(db, user_id)("find_recurring_payments")["recurring"]
    by_merchant = {r["merchant"]: r for r in found}
    assert {m: by_merchant[m]["typical_amount"] for m in SUBSCRIPTIONS} == {
        "Netflix": "15.49",
        "Spotify": "11.99",
        "iCloud+": "2.99",
        "FitLife Gym": "49.00",
    }
    assert all(by_merchant[m]["cadence"] == "monthly" for m in SUBSCRIPTIONS)
    assert all(by_merchant[m]["active"] for m in SUBSCRIPTIONS)
    assert by_merchant["Parkview Apartments"]["typical_amount"] == "1850.00"
    assert not {g[0] for g in GROCERS} & set(by_merchant)
    # Income is a series too, money in: not a payment.
    assert by_merchant["Acme Corp Payroll"]["direction"] == "in"
    assert all(by_merchant[m]["direction"] == "out" for m in SUBSCRIPTIONS)


def test_pending_are_few_and_recent(db: Database) -> None:
    user_id, summary = seeded(db, "a")
    pending = Caller(db, user_id)("get_transactions", pending=True)
    assert pending["count"] == summary["pending"]
    assert all(
        date.fromisoformat(r["date"]) >= DAY - timedelta(days=1) for r in pending["transactions"]
    )
    assert all(r["amount"].startswith("-") for r in pending["transactions"])


def test_travel_spike_is_in_euros_in_one_month(db: Database) -> None:
    user_id, summary = seeded(db, "a")
    call = Caller(db, user_id)
    by_month = call(
        "get_spending_summary", start_date="2024-01-01", end_date="2025-12-31", group_by="month"
    )
    eur, usd = by_month["currencies"]
    assert eur["currency"] == "EUR"
    assert [g["key"] for g in eur["groups"]] == [summary["travel_month"]]
    usd_months = {g["key"]: g["spent"] for g in usd["groups"]}
    trip_usd = Decimal(usd_months.pop(summary["travel_month"]))
    assert trip_usd > max(Decimal(v) for k, v in usd_months.items() if k != "2025-06")
    travel = call("get_transactions", category="travel", direction="in")
    assert [(r["merchant"], r["currency"]) for r in travel["transactions"]] == [
        ("Hôtel du Marais", "EUR")
    ]


def test_budgets_have_a_month_override(db: Database) -> None:
    user_id, summary = seeded(db, "a")
    call = Caller(db, user_id)
    trip = {
        b["category"]: b
        for b in call("get_budget_status", month=summary["travel_month"])["budgets"]
    }
    usual = {b["category"]: b for b in call("get_budget_status", month="2025-05")["budgets"]}
    assert (trip["Restaurants"]["budget_type"], trip["Restaurants"]["limit"]) == (
        "this_month",
        "450.00",
    )
    assert (usual["Restaurants"]["budget_type"], usual["Restaurants"]["limit"]) == (
        "recurring",
        "300.00",
    )
    assert trip["Restaurants"]["not_counted_other_currencies"][0]["currency"] == "EUR"
    assert set(usual) == {
        "Groceries",
        "Restaurants",
        "Transport",
        "Utilities",
        "Subscriptions",
        "Fitness",
        "Shopping",
    }


def test_balances_are_opening_plus_posted_transactions(db: Database) -> None:
    user_id, _ = seeded(db, "a")
    call = Caller(db, user_id)
    balances = {a["name"]: a["balance"] for a in call("get_account_balances")["accounts"]}
    for name, _kind, currency, opening in ACCOUNTS:
        totals = call("get_transactions", account=name, pending=False, limit=1)["totals"]
        net = sum(int(t["net"].replace(".", "")) for t in totals if t["currency"] == currency)
        assert int(balances[name].replace(".", "")) == opening + net, name
    assert balances["Euro Travel Card"] == "0.00"  # the trip was paid off the next month
    assert balances["Rewards Visa"].startswith("-")


def test_cli_creates_the_user_and_prints_one_line(db: Database) -> None:
    app = Flask("seed-test")
    app.extensions["db"] = db
    app.cli.add_command(seed_demo)
    runner = app.test_cli_runner()
    with pinned_today(DAY):
        first = runner.invoke(args=["seed-demo", "dora", "--months", "3", "--seed", "5"])
        second = runner.invoke(args=["seed-demo", "dora", "--months", "3", "--seed", "5"])
    assert first.exit_code == 0, first.output
    assert first.output == second.output
    assert first.output.count("\n") == 1
    assert first.output.startswith("seeded dora (id ")
    assert "from 2025-04-01 to 2025-06-15 in EUR, USD" in first.output
    with db.transaction() as s:
        assert s.scalar(select(func.count()).select_from(User).where(User.name == "dora")) == 1
    bad = runner.invoke(args=["seed-demo", "dora", "--months", "0"])
    assert bad.exit_code != 0


def test_the_demo_exercises_the_money_rule_and_the_series(db: Database) -> None:
    user_id, _ = seeded(db, "a")
    call = Caller(db, user_id)
    moved = call("get_transactions", merchant="Transfer to High-Yield Savings", limit=200)
    # The monthly move to savings carries no category: both legs are paired as a transfer.
    assert {r["category"] for r in moved["transactions"]} == {None}
    assert {r["flow"] for r in moved["transactions"]} == {"transfer"}
    back = call("get_transactions", merchant="Amazon", direction="in", limit=200)
    assert back["count"] >= 2
    # Stored without a category, each return counts in its purchase's: Shopping.
    assert {(r["category"], r["flow"]) for r in back["transactions"]} == {("Shopping", "refund")}
    income = call("get_transactions", category="Uncategorized", flow="income", limit=200)
    assert {r["merchant"] for r in income["transactions"]} == {"Brightside Studio"}
    freelance = call("get_transactions", merchant="Brightside", limit=200)
    assert {(r["category"], r["flow"]) for r in freelance["transactions"]} == {(None, "income")}
    with pinned_today(DAY):
        found = {r["name"]: r for r in call("find_recurring_payments")["recurring"]}
    prime = found["Amazon Prime"]
    assert (prime["cadence"], prime["occurrences"], prime["next_expected_date"]) == (
        "yearly",
        2,
        "2026-02-14",
    )
    assert [c["text"] for c in found["Netflix"]["price_changes"]] == [
        "15.49 -> 17.99 USD since March 2025"
    ]
    assert found["Netflix"]["next_expected_amount"] == "17.99"

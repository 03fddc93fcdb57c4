"""Seed one user with realistic, deterministic finances (same seed -> same rows).

The history exercises the money rule and the recurring series: a monthly move to savings whose
two legs carry no category (a transfer all the same), online orders returned for a refund with
no category, freelance income with no category, a yearly charge and a subscription whose price
went up.
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass, replace
from datetime import date, timedelta
from typing import Any

from sqlalchemy import delete, exists, select
from sqlalchemy.orm import Session

from demo_data import catalog as c
from models.db import Database
from models.finance import Account, Budget, Category, Transaction
from tools.finance.clock import add_months, days_in_month, month_start
from tools.finance.clock import today as clock_today


@dataclass(frozen=True)
class Row:
    """One planned transaction, referring to its account and category by name."""

    day: date
    account: str
    amount: int
    merchant: str
    category: str | None
    description: str = "Card purchase"
    pending: bool = False


DEFAULT_MONTHS = 18


def seed_finance(
    db: Database,
    user_id: int,
    months: int = DEFAULT_MONTHS,
    seed: int = 42,
    today: date | None = None,
    if_empty: bool = False,
) -> dict[str, Any] | None:
    """Replace the user's finance data with `months` of generated history; return a summary.

    With `if_empty`, a user who has any finance data keeps it as it is, and None is returned.
    """
    if months < 1:
        raise ValueError("months must be at least 1")
    end = today or clock_today()
    start = month_start(add_months(end, -(months - 1)))
    travel = month_start(add_months(end, -min(months // 2, 6)))
    rows = plan_rows(random.Random(seed), start, end, travel)
    # One transaction, so nobody ever sees the user's data half replaced.
    with db.transaction() as s:
        if if_empty and has_finance_data(s, user_id):
            return None
        for model in (Transaction, Budget, Category, Account):
            s.execute(delete(model).where(model.user_id == user_id))
        budgets = _insert(s, user_id, rows, travel)
    return {
        "user_id": user_id,
        "seed": seed,
        "start_date": start.isoformat(),
        "end_date": end.isoformat(),
        "travel_month": travel.strftime("%Y-%m"),
        "accounts": len(c.ACCOUNTS),
        "categories": len(c.CATEGORIES),
        "budgets": budgets,
        "transactions": len(rows),
        "pending": sum(r.pending for r in rows),
        "refunds": sum(r.amount > 0 and r.description.startswith("Refund") for r in rows),
        "currencies": sorted({_currency(r.account) for r in rows}),
    }


def has_finance_data(s: Session, user_id: int) -> bool:
    """Return whether the user has any account, category, transaction or budget."""
    models = (Account, Category, Transaction, Budget)
    return any(s.scalar(select(exists().where(m.user_id == user_id))) for m in models)


def _insert(s: Session, user_id: int, rows: list[Row], travel: date) -> int:
    """Add accounts, categories, budgets and `rows` for the user; return the budget count."""
    balances = _balances(rows)
    accounts = {
        name: Account(
            user_id=user_id,
            name=name,
            kind=kind,
            currency=cur,
            balance_minor=opening + balances[name],
        )
        for name, kind, cur, opening in c.ACCOUNTS
    }
    categories = {n: Category(user_id=user_id, name=n, kind=k) for n, k in c.CATEGORIES}
    # (category, month or None for every month, limit in minor units)
    limits: list[tuple[str, date | None, int]] = [(name, None, limit) for name, limit in c.BUDGETS]
    limits.append((c.TRAVEL_MONTH_OVERRIDE[0], travel, c.TRAVEL_MONTH_OVERRIDE[1]))
    s.add_all([*accounts.values(), *categories.values()])
    s.add_all(
        Budget(user_id=user_id, category=categories[n], month=m, limit_minor=lim, currency=c.HOME)
        for n, m, lim in limits
    )
    s.add_all(
        Transaction(
            user_id=user_id,
            account=accounts[r.account],
            posted_on=r.day,
            amount_minor=r.amount,
            currency=_currency(r.account),
            merchant=r.merchant,
            description=r.description,
            category=categories[r.category] if r.category else None,
            pending=r.pending,
        )
        for r in rows
    )
    return len(limits)


def plan_rows(rng: random.Random, start: date, end: date, travel: date) -> list[Row]:
    """Return every transaction from `start` to `end`, sorted, consuming `rng` in a fixed order."""
    rows: list[Row] = []
    trip = [travel.replace(day=d) for d in c.TRIP_DAYS]
    next_grocery = start + timedelta(days=rng.randint(0, 3))
    purchases = 0
    day = start
    price_up = month_start(add_months(end, -c.PRICE_CHANGE_MONTHS_BACK))
    yearly = add_months(start, 1)
    while day <= end:
        if day.day == 1:
            rows += _monthly(rng, day, travel, price_up)
            rows += _yearly_and_freelance(rng, day, yearly)
        if day in trip:
            rows += _trip_day(rng, day, trip)
        else:
            if day >= next_grocery:
                rows.append(_pick(rng, c.GROCERS, day, "Groceries"))
                next_grocery = day + timedelta(days=rng.randint(5, 9))
            for chance, choices, category in (
                (0.08, (c.CORNER_SHOP,), "Groceries"),
                (0.25, c.RESTAURANTS, "Restaurants"),
                (0.15, c.RIDES, "Transport"),
                (0.06, (c.SHOP,), "Shopping"),
            ):
                if rng.random() < chance:
                    rows.append(_pick(rng, choices, day, category))
                    purchases += category == "Shopping"
                    # Every seventh online order goes back, refunded a week later (the
                    # bank's row carries no category: the money rule finds the purchase).
                    if category == "Shopping" and purchases % 7 == 3:
                        last = rows[-1]
                        rows.append(
                            Row(
                                day + timedelta(days=7),
                                c.VISA,
                                -last.amount,
                                last.merchant,
                                None,
                                "Refund: returned item",
                            )
                        )
        day += timedelta(days=1)
    rows += _card_payments(rows, start, end)
    rows.append(Row(end, c.VISA, -rng.randint(3_000, 6_500), "Shell", "Transport", "Fuel", True))
    kept = [r for r in rows if start <= r.day <= end]
    # Card purchases of the last two days have not settled yet.
    settled = end - timedelta(days=2)
    kept = [replace(r, pending=True) if _recent_card(r, settled) else r for r in kept]
    return sorted(kept, key=lambda r: (r.day, r.account, r.merchant, r.amount, r.description))


def _monthly(rng: random.Random, first: date, travel: date, price_up: date) -> list[Row]:
    last_day = days_in_month(first.year, first.month)
    rows = [
        Row(first.replace(day=min(d, last_day)), acct, amount, merchant, cat, desc)
        for merchant, amount, d, cat, acct, desc in c.FIXED_MONTHLY
    ]
    if first >= price_up:
        rows = [
            replace(r, amount=c.NETFLIX_NEW_PRICE) if r.merchant == "Netflix" else r for r in rows
        ]
    name, d, lo, hi = c.ELECTRICITY
    rows.append(
        Row(
            first.replace(day=d), c.CHECKING, -rng.randint(lo, hi), name, "Utilities", "Electricity"
        )
    )
    rows.append(
        Row(
            first.replace(day=26),
            c.CHECKING,
            -c.SAVINGS_TRANSFER,
            f"Transfer to {c.SAVINGS}",
            None,
            "Scheduled transfer",
        )
    )
    rows.append(
        Row(
            first.replace(day=27),
            c.SAVINGS,
            c.SAVINGS_TRANSFER,
            f"Transfer from {c.CHECKING}",
            None,
            "Scheduled transfer",
        )
    )
    rows.append(
        Row(
            first.replace(day=last_day),
            c.SAVINGS,
            rng.randint(900, 1_400),
            "High-Yield Savings",
            "Interest",
            "Interest paid",
        )
    )
    if first == travel:
        merchant, amount = c.FLIGHT
        rows.append(
            Row(first.replace(day=2), c.VISA, amount, merchant, "Travel", "Flights JFK-CDG return")
        )
    return rows


def _yearly_and_freelance(rng: random.Random, first: date, yearly: date) -> list[Row]:
    """The yearly charge in its month, and a freelance invoice paid every other month."""
    rows = []
    if first.month == yearly.month:
        merchant, amount, day, category, account, description = c.YEARLY
        rows.append(Row(first.replace(day=day), account, amount, merchant, category, description))
    if first.month % 2:
        merchant, lo, hi, day = c.FREELANCE
        paid = rng.randint(lo, hi) // 100 * 100
        rows.append(Row(first.replace(day=day), c.CHECKING, paid, merchant, None, "Invoice paid"))
    return rows


def _trip_day(rng: random.Random, day: date, trip: list[date]) -> list[Row]:
    rows = [
        _pick(rng, c.TRIP_RESTAURANTS, day, "Restaurants", c.TRAVEL_CARD)
        for _ in range(rng.randint(1, 3))
    ]
    rows.append(_pick(rng, (c.TRIP_METRO,), day, "Transport", c.TRAVEL_CARD))
    if day == trip[1]:
        merchant, amount = c.TRIP_MUSEUM
        rows.append(Row(day, c.TRAVEL_CARD, amount, merchant, "Travel", "Tickets"))
    if day == trip[-1]:
        merchant, amount = c.HOTEL
        rows.append(Row(day, c.TRAVEL_CARD, amount, merchant, "Travel", f"{len(trip) - 1} nights"))
        rows.append(
            Row(
                day + timedelta(days=3),
                c.TRAVEL_CARD,
                c.HOTEL_REFUND,
                merchant,
                "Travel",
                "Refund: minibar charge reversed",
            )
        )
    return rows


def _card_payments(rows: list[Row], start: date, end: date) -> list[Row]:
    """Pay each card's previous-month charges from checking on the 7th."""
    owed: dict[tuple[str, date], int] = defaultdict(int)
    for r in rows:
        if r.account in (c.VISA, c.TRAVEL_CARD):
            owed[(r.account, month_start(r.day))] += r.amount
    out: list[Row] = []
    for (card, month), total in sorted(owed.items()):
        pay_day = add_months(month, 1).replace(day=7)
        if total >= 0 or pay_day > end:
            continue
        paid = -total if card == c.VISA else -total * c.EUR_TO_USD_PERCENT // 100
        out.append(Row(pay_day, card, -total, "Payment received", "Transfers", "Thank you"))
        out.append(Row(pay_day, c.CHECKING, -paid, f"{card} payment", "Transfers", "Card payment"))
    return out


def _pick(
    rng: random.Random,
    choices: tuple[tuple[str, int, int], ...],
    day: date,
    category: str,
    account: str = c.VISA,
) -> Row:
    merchant, lo, hi = choices[rng.randrange(len(choices))]
    return Row(day, account, -rng.randint(lo, hi), merchant, category)


def _recent_card(r: Row, settled: date) -> bool:
    return r.day > settled and r.amount < 0 and r.account in (c.VISA, c.TRAVEL_CARD)


def _currency(account: str) -> str:
    return next(cur for name, _kind, cur, _ in c.ACCOUNTS if name == account)


def _balances(rows: list[Row]) -> dict[str, int]:
    totals: dict[str, int] = defaultdict(int)
    for r in rows:
        if not r.pending:
            totals[r.account] += r.amount
    return totals

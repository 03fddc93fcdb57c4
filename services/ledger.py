"""The user's own finance records, managed by hand: accounts, categories, budgets, transactions.

A posted (not pending) transaction moves its account's balance: adding, editing or deleting
one by hand changes the balance by exactly its amount.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from sqlalchemy import exc, select
from sqlalchemy.orm import Session

from domain.errors import Conflict, NotFound, Unprocessable
from domain.money import format_minor, minor_units
from models import Account, Budget, Category, Transaction
from models.db import Database
from tools.finance.transactions import transaction_by_id

# The largest amount, in minor units, a record holds (a 64-bit column, with room for sums).
LARGEST = 10**15


def accounts(db: Database, user_id: int) -> list[dict[str, Any]]:
    """The user's accounts by name, with their posted balances."""
    with db.read() as s:
        found = s.scalars(select(Account).where(Account.user_id == user_id).order_by(Account.name))
        return [_account(a) for a in found]


def create_account(db: Database, user_id: int, data: dict[str, Any]) -> dict[str, Any]:
    """Add an account; its name is the user's own (409 if taken)."""
    currency = data["currency"].upper()
    account = Account(
        user_id=user_id,
        name=data["name"],
        kind=data["kind"],
        currency=currency,
        balance_minor=_minor(data.get("balance", Decimal(0)), currency, "balance"),
    )
    try:
        with db.transaction() as s:
            s.add(account)
    except exc.IntegrityError as err:
        raise Conflict("An account of that name exists.", code="name_taken", field="name") from err
    return _account(account)


def categories(db: Database, user_id: int) -> list[dict[str, Any]]:
    """The user's categories by name."""
    with db.read() as s:
        found = s.scalars(
            select(Category).where(Category.user_id == user_id).order_by(Category.name)
        )
        return [{"id": c.id, "name": c.name, "kind": c.kind} for c in found]


def create_category(db: Database, user_id: int, data: dict[str, Any]) -> dict[str, Any]:
    """Add a category; its name is the user's own (409 if taken)."""
    category = Category(user_id=user_id, name=data["name"], kind=data["kind"])
    try:
        with db.transaction() as s:
            s.add(category)
    except exc.IntegrityError as err:
        raise Conflict("A category of that name exists.", code="name_taken", field="name") from err
    return {"id": category.id, "name": category.name, "kind": category.kind}


def budgets(db: Database, user_id: int) -> list[dict[str, Any]]:
    """The user's budgets: recurring ones first, then by month, by category."""
    with db.read() as s:
        found = s.execute(
            select(Budget, Category.name)
            .join(Category, Category.id == Budget.category_id)
            .where(Budget.user_id == user_id)
            .order_by(Budget.month.is_not(None), Budget.month, Category.name)
        )
        return [
            {
                "id": b.id,
                "category": name,
                "month": b.month.strftime("%Y-%m") if b.month else None,
                "limit": format_minor(b.limit_minor, b.currency),
                "currency": b.currency,
            }
            for b, name in found
        ]


def add_transaction(db: Database, user_id: int, data: dict[str, Any]) -> dict[str, Any]:
    """Add a transaction by hand to one of the user's accounts."""
    with db.transaction() as s:
        account = _owned_account(s, user_id, data["account_id"])
        txn = Transaction(
            user_id=user_id,
            account_id=account.id,
            posted_on=data["date"],
            amount_minor=_minor(data["amount"], account.currency, "amount"),
            currency=account.currency,
            merchant=data["merchant"],
            description=data.get("description", ""),
            category_id=_category_id(s, user_id, data.get("category")),
            pending=data.get("pending", False),
        )
        s.add(txn)
        _move(account, txn, +1)
        s.flush()
        return _shown(s, user_id, txn.id)


def edit_transaction(
    db: Database, user_id: int, transaction_id: int, data: dict[str, Any]
) -> dict[str, Any]:
    """Change a transaction's date, amount, merchant, description, category or pending."""
    with db.transaction() as s:
        txn = _owned_transaction(s, user_id, transaction_id)
        account = _owned_account(s, user_id, txn.account_id)
        _move(account, txn, -1)
        if "date" in data:
            txn.posted_on = data["date"]
        if "amount" in data:
            txn.amount_minor = _minor(data["amount"], txn.currency, "amount")
        for name in ("merchant", "description", "pending"):
            if name in data:
                setattr(txn, name, data[name])
        if "category" in data:
            txn.category_id = _category_id(s, user_id, data["category"])
        _move(account, txn, +1)
        s.flush()
        return _shown(s, user_id, txn.id)


def delete_transaction(db: Database, user_id: int, transaction_id: int) -> None:
    """Delete a transaction; a posted one's amount leaves its account's balance."""
    with db.transaction() as s:
        txn = _owned_transaction(s, user_id, transaction_id)
        _move(_owned_account(s, user_id, txn.account_id), txn, -1)
        s.delete(txn)


def _account(account: Account) -> dict[str, Any]:
    return {
        "id": account.id,
        "name": account.name,
        "kind": account.kind,
        "currency": account.currency,
        "balance": format_minor(account.balance_minor, account.currency),
    }


def _owned_account(s: Session, user_id: int, account_id: int) -> Account:
    account = s.get(Account, account_id, with_for_update=True)
    if account is None or account.user_id != user_id:
        raise NotFound("account", str(account_id))
    return account


def _owned_transaction(s: Session, user_id: int, transaction_id: int) -> Transaction:
    txn = s.get(Transaction, transaction_id)
    if txn is None or txn.user_id != user_id:
        raise NotFound("transaction", str(transaction_id))
    return txn


def _category_id(s: Session, user_id: int, name: str | None) -> int | None:
    if name is None:
        return None
    found = s.scalar(select(Category.id).where(Category.user_id == user_id, Category.name == name))
    if found is None:
        raise Unprocessable(f"No category named {name!r}.", field="category")
    return found


def _minor(amount: Decimal, currency: str, field: str) -> int:
    scaled = Decimal(amount).scaleb(minor_units(currency))
    if scaled != scaled.to_integral_value():
        raise Unprocessable(f"{currency} has {minor_units(currency)} decimals.", field=field)
    if abs(scaled) > LARGEST:
        raise Unprocessable("The amount is too large.", field=field)
    return int(scaled)


def _move(account: Account, txn: Transaction, sign: int) -> None:
    if not txn.pending:
        account.balance_minor += sign * txn.amount_minor


def _shown(s: Session, user_id: int, transaction_id: int) -> dict[str, Any]:
    found = transaction_by_id(s, user_id, transaction_id)
    assert found is not None
    return found

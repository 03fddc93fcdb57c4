"""The finance records a cited source names, for their owner only, as the read tools show them.

Sources are `txn:<id>`, `budget:<id>`, `account:<id>` and `txns:<query>` (the rows behind a
summary figure, a query of get_transactions filters). Another user's record and an unknown one
are the same to a caller: not found.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from sqlalchemy import and_, select

from engine.errors import NotFoundError, Refused
from models.db import Database
from models.finance import Account, Budget, Category, Transaction
from tools.finance.clock import days_in_month, month_start, today
from tools.finance.money import format_minor
from tools.finance.queries import CategoryRef, spending_totals, with_category
from tools.finance.status import _budget_row
from tools.finance.transactions import get_transactions, transaction_row
from tools.registry import ToolContext, ToolInputError

BAD_CURSOR = "Not a next_cursor of this query: ask again without cursor for the first page."


def transaction(db: Database, user_id: int, transaction_id: int) -> dict[str, Any]:
    """Return the user's transaction as get_transactions shows it, or raise NotFound."""
    stmt = with_category(
        select(Transaction, Category.name, Account.name).join(
            Account, and_(Account.id == Transaction.account_id, Account.user_id == user_id)
        ),
        user_id,
    ).where(Transaction.id == transaction_id, Transaction.user_id == user_id)
    with db.read() as s:
        found = s.execute(stmt).first()
        if found is None:
            raise NotFoundError("transaction", str(transaction_id))
        return transaction_row(*found)


def account(db: Database, user_id: int, account_id: int) -> dict[str, Any]:
    """Return the user's account as get_account_balances shows it (with its id)."""
    with db.read() as s:
        row = s.scalars(
            select(Account).where(Account.id == account_id, Account.user_id == user_id)
        ).first()
        if row is None:
            raise NotFoundError("account", str(account_id))
        return {
            "id": row.id,
            "name": row.name,
            "kind": row.kind,
            "currency": row.currency,
            "balance": format_minor(row.balance_minor, row.currency),
        }


def budget(db: Database, user_id: int, budget_id: int) -> dict[str, Any]:
    """Return the user's budget as get_budget_status shows it, over its month.

    A budget for one month is shown over that month, a recurring one over the current month.
    """
    with db.read() as s:
        found = s.execute(
            select(Budget, Category.name)
            .join(Category, Category.id == Budget.category_id)
            .where(Budget.id == budget_id, Budget.user_id == user_id, Category.user_id == user_id)
        ).first()
        if found is None:
            raise NotFoundError("budget", str(budget_id))
        row, name = found
        first: date = row.month or month_start(today())
        end = first.replace(day=days_in_month(first.year, first.month))
        ref = CategoryRef(row.category_id, name)
        spent = {
            currency: minor
            for _key, currency, minor, _n in spending_totals(
                s, user_id, first, end, Transaction.category_id, ref
            )
        }
        return {"id": row.id, "month": first.strftime("%Y-%m"), **_budget_row(row, name, spent)}


def transactions(db: Database, user_id: int, query: dict[str, Any]) -> dict[str, Any]:
    """Return a page of the rows a `txns:<query>` source stands for, with count and totals.

    The filters mean exactly what they mean to get_transactions, which does the work; what it
    refuses (an unknown category or account, a period ending before it starts, another
    query's cursor) is a 422 naming the parameter.
    """
    try:
        found = get_transactions(ToolContext(user_id, db), query).result
    except ToolInputError as err:
        message = BAD_CURSOR if err.field == "cursor" else err.message
        raise Refused("validation_error", message, field=err.field) from err
    return {
        "transactions": found["transactions"],
        "count": found["count"],
        "totals": found["totals"],
        "next_cursor": found["next_cursor"],
    }

"""SQL shared by the finance tools; every statement is scoped to one user id."""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Any, TypeVarTuple

from sqlalchemy import ColumnElement, Select, and_, case, func, or_, select
from sqlalchemy.orm import Session

from domain.money import (
    DEFAULT_MINOR_UNITS,
    OTHER_MINOR_UNITS,
    lower_bound_minor,
    upper_bound_minor,
)
from models.finance import Account, Category, Transaction
from tools.finance.flows import category_id, net_spending
from tools.registry import ToolInputError

UNCATEGORIZED = "Uncategorized"
Columns = TypeVarTuple("Columns")


@dataclass(frozen=True)
class CategoryRef:
    """A resolved category filter: one category id, or transactions without a category."""

    id: int | None
    name: str


def check_range(start: date | None, end: date | None, start_field: str, end_field: str) -> None:
    """Raise a ToolInputError on `end_field` when the period ends before it starts."""
    if start is not None and end is not None and end < start:
        raise ToolInputError(
            end_field,
            f"{end_field} {end.isoformat()} is before {start_field} {start.isoformat()}; "
            f"pass an {end_field} on or after {start_field}.",
        )


def resolve_category(s: Session, user_id: int, name: str, field: str = "category") -> CategoryRef:
    """Find the user's category called `name` (any case) or raise listing the valid names."""
    row = s.execute(
        select(Category.id, Category.name).where(
            Category.user_id == user_id, func.lower(Category.name) == name.strip().lower()
        )
    ).first()
    if row is not None:
        return CategoryRef(row.id, row.name)
    if name.strip().lower() == UNCATEGORIZED.lower():
        return CategoryRef(None, UNCATEGORIZED)
    known = s.scalars(
        select(Category.name).where(Category.user_id == user_id).order_by(Category.name)
    ).all()
    raise ToolInputError(
        field, f"unknown category {name!r}. Use one of: {', '.join([*known, UNCATEGORIZED])}."
    )


def resolve_account(s: Session, user_id: int, name: str, field: str = "account") -> int:
    """Return the id of the user's account called `name` (any case) or raise listing names."""
    account_id = s.scalar(
        select(Account.id).where(
            Account.user_id == user_id, func.lower(Account.name) == name.strip().lower()
        )
    )
    if account_id is not None:
        return account_id
    known = s.scalars(
        select(Account.name).where(Account.user_id == user_id).order_by(Account.name)
    ).all()
    listed = ", ".join(known) or "(the user has no accounts)"
    raise ToolInputError(field, f"unknown account {name!r}. Use one of: {listed}.")


def category_clause(ref: CategoryRef) -> ColumnElement[bool]:
    """Return the WHERE clause selecting `ref`'s transactions (a refund with no category of its
    own counts in its purchase's: tools/finance/flows.py)."""
    if ref.id is None:
        return category_id().is_(None)
    return category_id() == ref.id


def with_category(stmt: Select[*Columns], user_id: int) -> Select[*Columns]:
    """Outer-join the category the transaction counts in, only if it is the same user's."""
    return stmt.outerjoin(Category, and_(Category.id == category_id(), Category.user_id == user_id))


def period_clause(start: date | None, end: date | None) -> list[ColumnElement[bool]]:
    """Return the inclusive date bounds that are set."""
    out: list[ColumnElement[bool]] = []
    if start is not None:
        out.append(Transaction.posted_on >= start)
    if end is not None:
        out.append(Transaction.posted_on <= end)
    return out


def amount_clause(amount: Decimal, *, minimum: bool) -> ColumnElement[bool]:
    """Compare |amount_minor| with a major-unit bound, converted per currency's decimals."""
    compare: Callable[[Any, int], ColumnElement[bool]] = operator.ge if minimum else operator.le
    bound = lower_bound_minor if minimum else upper_bound_minor
    magnitude = func.abs(Transaction.amount_minor)
    by_units: dict[int, list[str]] = {}
    for currency, units in OTHER_MINOR_UNITS.items():
        by_units.setdefault(units, []).append(currency)
    clauses = [
        and_(Transaction.currency.in_(codes), compare(magnitude, bound(amount, units)))
        for units, codes in by_units.items()
    ]
    clauses.append(
        and_(
            Transaction.currency.not_in(list(OTHER_MINOR_UNITS)),
            compare(magnitude, bound(amount, DEFAULT_MINOR_UNITS)),
        )
    )
    return or_(*clauses)


def spending_totals(
    s: Session,
    user_id: int,
    start: date | None,
    end: date | None,
    key: Any,
    category: CategoryRef | None = None,
) -> list[tuple[Any, str, int, int, int, int]]:
    """Return (key, currency, net spent, count, charged, refunded) per group, in minor units.

    Spending is counted by the one money rule (tools/finance/flows.py): charged is the money
    out that is spending, refunded the money back for it, net spent the one less the other.
    """
    amount = Transaction.amount_minor
    stmt = with_category(
        select(
            key,
            Transaction.currency,
            func.count(),
            func.sum(case((amount < 0, -amount), else_=0)),
            func.sum(case((amount > 0, amount), else_=0)),
        ),
        user_id,
    ).where(Transaction.user_id == user_id, net_spending(), *period_clause(start, end))
    if category is not None:
        stmt = stmt.where(category_clause(category))
    stmt = stmt.group_by(key, Transaction.currency)
    return [
        (k, cur, int(out) - int(back), int(n), int(out), int(back))
        for k, cur, n, out, back in s.execute(stmt)
    ]

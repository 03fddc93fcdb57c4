"""set_budget and categorize_transaction: the tools that change the user's data, and previews.

A preview reads what the handler would change, in a read-only transaction, and changes
nothing. The handler plans the same way inside its one write transaction and writes one row,
so what it writes is decided by the rows it reads there, not by an earlier preview; its
result is recorded in that same transaction (`ToolContext.applied`), so the change happens
once even if the worker dies as it commits.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from domain.money import format_minor, minor_units
from models.finance import Account, Budget, Category, Transaction
from tools.finance.clock import month_start, today
from tools.finance.transactions import transaction_row
from tools.registry import ToolContext, ToolInputError


@dataclass(frozen=True)
class BudgetPlan:
    """What set_budget will write: the category's recurring budget, new limit and currency."""

    category: Category
    current: Budget | None  # the recurring budget as it is, if there is one
    this_month: Budget | None  # a budget for the current month, which overrides the recurring
    limit_minor: int
    currency: str


@dataclass(frozen=True)
class CategorizePlan:
    """What categorize_transaction will write: the transaction and its new category."""

    transaction: Transaction
    account: str
    before: str | None
    after: Category


def set_budget(ctx: ToolContext, data: dict[str, Any]) -> dict[str, Any]:
    """Create or update the user's recurring monthly budget for one expense category."""
    try:
        return _set_budget(ctx, data)
    except IntegrityError:
        # A concurrent call created this recurring budget first: now it is an update.
        return _set_budget(ctx, data)


def preview_set_budget(ctx: ToolContext, data: dict[str, Any]) -> dict[str, Any]:
    """Describe what set_budget would change, changing nothing."""
    with ctx.db.read() as s:
        plan = _plan_budget(s, ctx.user_id, data, lock=False)
    before = _money(plan.current.limit_minor, plan.current.currency) if plan.current else None
    after = _money(plan.limit_minor, plan.currency)
    name = plan.category.name
    if before is None:
        summary = f"Create a monthly {name} budget of {after}"
    elif before == after:
        summary = f"Keep the monthly {name} budget at {after}, as it already is"
    else:
        summary = f"Set the monthly {name} budget from {before} to {after}"
    target: dict[str, Any] = {
        "kind": "budget",
        "id": plan.current.id if plan.current else None,
        "category": name,
        "budget_type": "recurring",
    }
    if plan.this_month is not None:
        month, limit = _override(plan.this_month)
        summary += f" (for {month} the budget set for that month, {limit}, still applies)"
        target["overridden_in"], target["override_limit"] = month, limit
    changes = [] if before == after else [{"field": "limit", "before": before, "after": after}]
    return {"summary": summary, "changes": changes, "target": target}


def categorize_transaction(ctx: ToolContext, data: dict[str, Any]) -> dict[str, Any]:
    """Set the category of one of the user's transactions."""
    with ctx.db.transaction() as s:
        plan = _plan_categorize(s, ctx.user_id, data, lock=True)
        plan.transaction.category_id = plan.after.id
        s.flush()
        out = {
            "transaction": _transaction_row(plan, plan.after.name),
            "before": plan.before,
            "changed": plan.before != plan.after.name,
        }
        ctx.applied(s, out)
    return out


def preview_categorize_transaction(ctx: ToolContext, data: dict[str, Any]) -> dict[str, Any]:
    """Describe what categorize_transaction would change, changing nothing."""
    with ctx.db.read() as s:
        plan = _plan_categorize(s, ctx.user_id, data, lock=False)
    t, after = plan.transaction, plan.after.name
    what = (
        f"the {format_minor(abs(t.amount_minor), t.currency)} {t.currency} {t.merchant} "
        f"transaction of {t.posted_on.isoformat()}"
    )
    if plan.before == after:
        summary, changes = f"Keep {what} in {after}, where it already is", []
    else:
        summary = f"Move {what} from {plan.before or 'Uncategorized'} to {after}"
        changes = [{"field": "category", "before": plan.before, "after": after}]
    target = {"kind": "transaction", **_transaction_row(plan, plan.before)}
    return {"summary": summary, "changes": changes, "target": target}


def _set_budget(ctx: ToolContext, data: dict[str, Any]) -> dict[str, Any]:
    with ctx.db.transaction() as s:
        plan = _plan_budget(s, ctx.user_id, data, lock=True)
        budget = plan.current
        before = (budget.limit_minor, budget.currency) if budget is not None else None
        if budget is None:
            budget = Budget(
                user_id=ctx.user_id,
                category_id=plan.category.id,
                month=None,
                limit_minor=plan.limit_minor,
                currency=plan.currency,
            )
            s.add(budget)
        else:
            budget.limit_minor, budget.currency = plan.limit_minor, plan.currency
        s.flush()
        out = _budget_result(plan, before)
        ctx.applied(s, out)
    return out


def _budget_result(plan: BudgetPlan, before: tuple[int, str] | None) -> dict[str, Any]:
    """What set_budget tells the model it changed."""
    out: dict[str, Any] = {
        "budget": {
            "category": plan.category.name,
            "budget_type": "recurring",
            "limit": format_minor(plan.limit_minor, plan.currency),
            "currency": plan.currency,
        },
        "before": format_minor(before[0], before[1]) if before else None,
        "changed": before != (plan.limit_minor, plan.currency),
    }
    if before is not None and before[1] != plan.currency:
        out["before_currency"] = before[1]
    if plan.this_month is not None:
        month, limit = _override(plan.this_month)
        out["note"] = (
            f"For {month} the budget set for that month ({limit}) still applies; the new "
            "limit counts in every month without a budget of its own."
        )
    return out


def _plan_budget(s: Session, user_id: int, data: dict[str, Any], *, lock: bool) -> BudgetPlan:
    category = _category(s, user_id, data["category"], expense_only=True)
    query = (
        select(Budget)
        .where(Budget.user_id == user_id, Budget.category_id == category.id)
        .order_by(Budget.month.desc())
    )
    # Locked, so a concurrent change waits and `before` is the limit this call replaced.
    budgets = s.scalars(query.with_for_update() if lock else query).all()
    current = next((b for b in budgets if b.month is None), None)
    this_month = next((b for b in budgets if b.month == month_start(today())), None)
    dated = next((b for b in budgets if b.month is not None), None)
    currency = data.get("currency") or next(
        (b.currency for b in (current, dated) if b is not None), None
    )
    if currency is None:
        currency = s.scalar(
            select(Account.currency).where(Account.user_id == user_id).order_by(Account.id)
        )
    if currency is None:
        raise ToolInputError(
            "currency", "the user has no budget or account to take a currency from; pass one."
        )
    return BudgetPlan(category, current, this_month, _to_minor(data["amount"], currency), currency)


def _plan_categorize(
    s: Session, user_id: int, data: dict[str, Any], *, lock: bool
) -> CategorizePlan:
    ident = data["transaction_id"]
    query = (
        select(Transaction, Account.name)
        .join(Account, Account.id == Transaction.account_id)
        .where(Transaction.id == ident, Transaction.user_id == user_id)
    )
    row = s.execute(query.with_for_update(of=Transaction) if lock else query).first()
    if row is None:
        raise ToolInputError("transaction_id", f"No transaction {ident} among yours.")
    transaction, account = row
    before = None
    if transaction.category_id is not None:
        before = s.scalar(
            select(Category.name).where(
                Category.id == transaction.category_id, Category.user_id == user_id
            )
        )
    after = _category(s, user_id, data["category"], expense_only=False)
    return CategorizePlan(transaction, account, before, after)


def _category(s: Session, user_id: int, name: str, *, expense_only: bool) -> Category:
    """Return the user's category called `name` (any case), or raise listing the valid names."""
    found = s.scalar(
        select(Category).where(
            Category.user_id == user_id, func.lower(Category.name) == name.strip().lower()
        )
    )
    if found is not None and (found.kind == "expense" or not expense_only):
        return found
    where = [Category.user_id == user_id]
    if expense_only:
        where.append(Category.kind == "expense")
    known = s.scalars(select(Category.name).where(*where).order_by(Category.name)).all()
    listed = ", ".join(known) or "(the user has none)"
    if found is not None:
        problem = f"{found.name!r} is an {found.kind} category; budgets limit spending"
        raise ToolInputError("category", f"{problem}, so use an expense category: {listed}.")
    what = "expense category" if expense_only else "category"
    raise ToolInputError("category", f"unknown {what} {name!r}. Use one of: {listed}.")


def _to_minor(amount: Decimal, currency: str) -> int:
    """Return `amount` in `currency`'s minor units, refusing digits the currency does not have."""
    units = minor_units(currency)
    scaled = amount.scaleb(units)
    if scaled != scaled.to_integral_value():
        digits = f"{units} decimals" if units else "no decimals"
        raise ToolInputError("amount", f"{currency} amounts have {digits}; round {amount}.")
    return int(scaled)


def _money(minor: int, currency: str) -> str:
    return f"{format_minor(minor, currency)} {currency}"


def _override(budget: Budget) -> tuple[str, str]:
    assert budget.month is not None
    return budget.month.strftime("%Y-%m"), _money(budget.limit_minor, budget.currency)


def _transaction_row(plan: CategorizePlan, category: str | None) -> dict[str, Any]:
    return transaction_row(plan.transaction, category, plan.account)

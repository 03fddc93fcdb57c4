"""get_account_balances and get_budget_status: where the user stands right now."""

from __future__ import annotations

from collections import defaultdict
from datetime import date
from typing import Any

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from domain.money import format_minor, percent
from models.finance import Account, Budget, Category
from tools.finance.cites import account_result, budget_result, spend_result
from tools.finance.clock import days_in_month, month_start, today
from tools.finance.periods import stated
from tools.finance.queries import CategoryRef, spending_totals
from tools.registry import MAX_SOURCES, Sourced, ToolContext

MAX_ACCOUNTS = 100
MAX_BUDGETS = 100


def get_account_balances(ctx: ToolContext, data: dict[str, Any]) -> Sourced:
    """Return every account of the user with its balance, and totals per currency.

    Its search results: the first accounts listed, one each.
    """
    with ctx.db.read() as s:
        accounts = s.scalars(
            select(Account)
            .where(Account.user_id == ctx.user_id)
            .order_by(Account.kind, Account.name)
            .limit(MAX_ACCOUNTS + 1)
        ).all()
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for account in accounts[:MAX_ACCOUNTS]:
        totals[account.currency][0] += account.balance_minor
        totals[account.currency][1] += 1
    rows = [account_row(a) for a in accounts[:MAX_ACCOUNTS]]
    now = today()
    out: dict[str, Any] = {
        "period": stated(now, now, f"today, {now.isoformat()}: posted balances"),
        "accounts": rows,
        "totals": [
            {"currency": cur, "balance": format_minor(total, cur), "accounts": n}
            for cur, (total, n) in sorted(totals.items())
        ],
        "note": "Balances are posted balances, signed: a negative balance is money owed (or an "
        "overdraft); pending transactions are not in them yet.",
    }
    if len(accounts) > MAX_ACCOUNTS:
        out["truncated"] = True
        out["note"] += f" Only the first {MAX_ACCOUNTS} accounts are listed and totalled."
    listed = zip(accounts[:MAX_SOURCES], rows, strict=False)
    return Sourced(out, [account_result(a.id, row) for a, row in listed])


def account_row(a: Account) -> dict[str, Any]:
    """Return an account as get_account_balances lists it."""
    return {
        "name": a.name,
        "kind": a.kind,
        "currency": a.currency,
        "balance": format_minor(a.balance_minor, a.currency),
    }


def account_by_id(s: Session, user_id: int, account_id: int) -> dict[str, Any] | None:
    """Return the user's account `account_id` as get_account_balances shows it, plus its id."""
    account = s.scalar(select(Account).where(Account.user_id == user_id, Account.id == account_id))
    return None if account is None else {"id": account.id, **account_row(account)}


def budget_by_id(s: Session, user_id: int, budget_id: int) -> dict[str, Any] | None:
    """Return the user's budget `budget_id` as get_budget_status shows it, plus id and month.

    A recurring budget is shown for the current month, a one-month budget for its month.
    """
    found = s.execute(
        select(Budget, Category.name)
        .join(Category, Category.id == Budget.category_id)
        .where(Budget.user_id == user_id, Category.user_id == user_id, Budget.id == budget_id)
    ).first()
    if found is None:
        return None
    budget, name = found
    first = budget.month or month_start(today())
    end = first.replace(day=days_in_month(first.year, first.month))
    ref = CategoryRef(budget.category_id, name)
    rows = spending_totals(s, user_id, first, end, Category.id, ref)
    spent = {currency: minor for _, currency, minor, *_ in rows}
    row = _budget_row(budget, name, spent)
    return {"id": budget.id, "month": first.strftime("%Y-%m"), **row}


def get_budget_status(ctx: ToolContext, data: dict[str, Any]) -> Sourced:
    """Return limit, spend and status of each budgeted category for one month.

    Its search results: each listed budget, then its category's spending that month.
    """
    now = today()
    first = _parse_month(data["month"]) if data.get("month") else month_start(now)
    days = days_in_month(first.year, first.month)
    end = first.replace(day=days)
    with ctx.db.read() as s:
        budgets = s.execute(
            select(Budget, Category.name)
            .join(Category, Category.id == Budget.category_id)
            .where(
                Budget.user_id == ctx.user_id,
                Category.user_id == ctx.user_id,
                or_(Budget.month == first, Budget.month.is_(None)),
            )
        ).all()
        spent_rows = spending_totals(s, ctx.user_id, first, end, Category.id)
    chosen: dict[int, tuple[Budget, str]] = {}
    for budget, name in budgets:
        # A budget for this very month overrides the recurring one.
        if budget.category_id not in chosen or budget.month is not None:
            chosen[budget.category_id] = (budget, name)
    spent: dict[int, dict[str, int]] = defaultdict(dict)
    counts: dict[int, dict[str, int]] = defaultdict(dict)
    for category_id, currency, minor, count, *_ in spent_rows:
        spent[category_id][currency] = minor
        counts[category_id][currency] = count
    items = sorted(chosen.values(), key=lambda bn: bn[1].lower())
    rows = [_budget_row(b, name, spent.get(b.category_id, {})) for b, name in items]
    elapsed = 0 if now < first else min(days, (now - first).days + 1)
    out: dict[str, Any] = {
        "period": stated(first, end),
        "month": first.strftime("%Y-%m"),
        "days_in_month": days,
        "days_elapsed": elapsed,
        "budgets": rows[:MAX_BUDGETS],
        "totals": _totals(items, spent),
    }
    if not rows:
        out["note"] = "No budgets are set for this month."
    if len(rows) > MAX_BUDGETS:
        out["truncated"] = True
        out["note"] = f"Only the first {MAX_BUDGETS} budgets are listed; totals cover all."
    month = out["month"]
    sources = []
    for (budget, name), row in zip(items[:MAX_BUDGETS], rows, strict=False):
        sources.append(budget_result(budget.id, month, row))
        used = [
            (cur, format_minor(minor, cur), counts[budget.category_id][cur])
            for cur, minor in sorted(spent.get(budget.category_id, {}).items())
        ]
        if used:
            sources.append(spend_result(name, first, end, used))
    return Sourced(out, sources[:MAX_SOURCES])


def _parse_month(text: str) -> date:
    # The schema's pattern already guarantees a real year and month.
    year, month = text.split("-")
    return date(int(year), int(month), 1)


def _status(spent: int, limit: int) -> str:
    if spent > limit:
        return "over"
    return "at" if spent == limit else "under"


def _budget_row(budget: Budget, name: str, spent_by_currency: dict[str, int]) -> dict[str, Any]:
    cur = budget.currency
    spent = spent_by_currency.get(cur, 0)
    row: dict[str, Any] = {
        "category": name,
        "budget_type": "recurring" if budget.month is None else "this_month",
        "currency": cur,
        "limit": format_minor(budget.limit_minor, cur),
        "spent": format_minor(spent, cur),
        "remaining": format_minor(budget.limit_minor - spent, cur),
        "percent_used": percent(spent, budget.limit_minor),
        "status": _status(spent, budget.limit_minor),
    }
    # Spend in other currencies is not converted, so it is shown apart, not counted.
    other = [
        {"spent": format_minor(v, c), "currency": c}
        for c, v in sorted(spent_by_currency.items())
        if c != cur
    ]
    if other:
        row["not_counted_other_currencies"] = other
    return row


def _totals(
    items: list[tuple[Budget, str]], spent: dict[int, dict[str, int]]
) -> list[dict[str, Any]]:
    sums: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for budget, _name in items:
        sums[budget.currency][0] += budget.limit_minor
        sums[budget.currency][1] += spent.get(budget.category_id, {}).get(budget.currency, 0)
    return [
        {
            "currency": cur,
            "limit": format_minor(limit, cur),
            "spent": format_minor(used, cur),
            "remaining": format_minor(limit - used, cur),
            "percent_used": percent(used, limit),
        }
        for cur, (limit, used) in sorted(sums.items())
    ]

"""account_balance chart: an account's posted balance at each month's end, from its rows.

The balance at a month's end is today's posted balance less the posted rows after it; each
point cites the account and the month's rows that moved it there.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from sqlalchemy import select

from domain.money import format_minor
from models.finance import Account, Transaction
from tools.finance import chart_specs
from tools.finance.cites import account_source, txns_source
from tools.finance.clock import days_in_month
from tools.finance.queries import resolve_account
from tools.registry import Sourced, ToolContext, ToolInputError

BALANCE = "Balance"


def account_balance(
    ctx: ToolContext, data: dict[str, Any], months: list[str], period: dict[str, str]
) -> Sourced:
    """Return the account's balance at the end of each month of the period, as a line."""
    if not data.get("account"):
        raise ToolInputError("account", "account_balance needs the account's name.")
    start, end = data["start_date"], data["end_date"]
    with ctx.db.read() as s:
        account = s.get(Account, resolve_account(s, ctx.user_id, data["account"]))
        assert account is not None and account.user_id == ctx.user_id
        found = s.execute(
            select(Transaction.posted_on, Transaction.amount_minor).where(
                Transaction.user_id == ctx.user_id,
                Transaction.account_id == account.id,
                Transaction.pending.is_(False),
                Transaction.posted_on >= start,
            )
        ).all()
    rows = [(day, int(minor)) for day, minor in found]
    values = [_point(account, month, rows, start, end) for month in months]
    title = f"{account.name} balance, {start.isoformat()} to {end.isoformat()} ({account.currency})"
    spec = chart_specs.line(title, account.currency, values, "Month end", "Balance")
    spec["totals"] = {BALANCE: values[-1]["amount"] if values else None}
    out: dict[str, Any] = {
        "kind": "account_balance",
        "period": period,
        "start_date": start.isoformat(),
        "end_date": end.isoformat(),
        "account": account.name,
        "charts": [spec],
        "note": "Each point is the posted balance at the month's end (or the period's end): "
        "today's balance less the posted rows after that day.",
    }
    return Sourced(out, [])


def _point(
    account: Account, month: str, rows: list[tuple[date, int]], start: date, end: date
) -> dict[str, Any]:
    year, number = map(int, month.split("-"))
    first = max(date(year, number, 1), start)
    last = min(date(year, number, days_in_month(year, number)), end)
    later = sum(minor for day, minor in rows if day > last)
    moved = [minor for day, minor in rows if first <= day <= last]
    balance = account.balance_minor - later
    cur = account.currency
    where = {"start_date": first, "end_date": last, "account": account.name}
    sources = [account_source(account.id), txns_source(where)]
    point = chart_specs.value(last.isoformat(), BALANCE, balance, cur, len(moved), sources)
    return {**point, "moved": format_minor(sum(moved), cur)}

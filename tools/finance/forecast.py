"""forecast_balance and get_upcoming_bills: balances and payments ahead, from recurring series.

A projected balance is today's posted balance, plus the pending rows still to post, plus each
expected occurrence of the account's active recurring series up to the date (money in and out,
transfers between the user's accounts included: they move each account's balance), and, when
asked, the spending the user's budgets still allow. Each figure cites the account, the series
(their rows) and the pending rows it rests on.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from domain.money import format_minor
from models.finance import Account, Transaction
from tools.finance.budget_outlook import budget_outlook
from tools.finance.cites import account_result, transaction_result
from tools.finance.clock import today
from tools.finance.flows import TRANSFER
from tools.finance.periods import stated
from tools.finance.queries import resolve_account
from tools.finance.recurring import Found, load, lookback, series_result, series_title
from tools.finance.status import account_row
from tools.finance.transactions import transactions_by_ids
from tools.registry import MAX_SOURCES, Sourced, ToolContext, ToolInputError

MAX_DAYS_AHEAD = 730
# An expected charge a few days late is still expected (banks post late); an older one missed.
LATE_DAYS = 3
MAX_BILLS = 100


@dataclass(frozen=True)
class Occurrence:
    """One expected charge of a series: its day and signed amount."""

    day: date
    amount: int
    found: Found


@dataclass
class Projection:
    """One account's balance today and what is expected to move it up to a date."""

    account: Account
    pending: list[tuple[int, date, int]] = field(default_factory=list)  # (id, day, amount)
    occurrences: list[Occurrence] = field(default_factory=list)

    def projected(self) -> int:
        """Return the balance once the pending rows and every occurrence have posted."""
        moved = sum(a for _, _, a in self.pending) + sum(o.amount for o in self.occurrences)
        return self.account.balance_minor + moved


def expected(found: list[Found], start: date, until: date) -> list[Occurrence]:
    """Return the occurrences of the active, undismissed series from `start` to `until`.

    A transfer of a varying amount (a card's monthly payment) pays for spending no series
    projects, so it is left out: projected alone it would only move money between accounts.
    """
    out = []
    for f in found:
        if not f.active or f.status == "dismissed" or (f.flow == TRANSFER and f.series.varies):
            continue
        sign = -1 if f.series.direction == "out" else 1
        after = max(f.series.last.day, start - timedelta(days=LATE_DAYS + 1))
        for day in f.series.next_dates(after, until):
            out.append(Occurrence(day, sign * f.series.expected, f))
    return sorted(out, key=lambda o: (o.day, o.found.name, o.found.series.id))


def project(s: Session, user_id: int, until: date, account: str | None) -> list[Projection]:
    """Return each of the user's accounts (or the one named) projected up to `until`."""
    now = today()
    query = select(Account).where(Account.user_id == user_id).order_by(Account.kind, Account.name)
    if account:
        query = query.where(Account.id == resolve_account(s, user_id, account, "account"))
    accounts = list(s.scalars(query))
    found = load(s, user_id, lookback(s, user_id, None), transfers=True)
    pending = s.execute(
        select(
            Transaction.id, Transaction.account_id, Transaction.posted_on, Transaction.amount_minor
        )
        .where(Transaction.user_id == user_id, Transaction.pending.is_(True))
        .order_by(Transaction.posted_on, Transaction.id)
    ).all()
    out = []
    occurrences = expected(found, now, until)
    for a in accounts:
        p = Projection(a)
        p.pending = [(i, d, int(m)) for i, acct, d, m in pending if acct == a.id]
        p.occurrences = [
            o
            for o in occurrences
            if o.found.account == a.name and o.found.series.currency == a.currency
        ]
        out.append(p)
    return out


def forecast_balance(ctx: ToolContext, data: dict[str, Any]) -> Sourced:
    """Return each account's projected balance on a date, and totals per currency."""
    now, on = today(), data["date"]
    if on < now or (on - now).days > MAX_DAYS_AHEAD:
        raise ToolInputError(
            "date",
            f"pass a date from today ({now.isoformat()}) to {MAX_DAYS_AHEAD} days ahead; for "
            "a past balance use the chart tool's account_balance.",
        )
    with ctx.db.read() as s:
        projections = project(s, ctx.user_id, on, data.get("account"))
        outlook = None
        if data["include_budgets"]:
            outlook = budget_outlook(s, ctx.user_id, now, on, _planned(projections))
        pending_ids = [i for p in projections for i, _, _ in p.pending]
        pending_rows = transactions_by_ids(s, ctx.user_id, pending_ids)
    rows = [_account_forecast(p) for p in projections]
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for p in projections:
        cell = totals[p.account.currency]
        cell[0] += p.account.balance_minor
        cell[1] += p.projected()
        cell[2] += 1
    used = {o.found.series.id: o.found for p in projections for o in p.occurrences}
    out: dict[str, Any] = {
        "period": stated(now, on, f"today ({now.isoformat()}) to {on.isoformat()}"),
        "date": on.isoformat(),
        "accounts": rows,
        "totals": [
            {
                "currency": cur,
                "balance_today": format_minor(v[0], cur),
                "projected_balance": format_minor(v[1], cur),
                "accounts": v[2],
            }
            for cur, v in sorted(totals.items())
        ],
        "series_used": [
            {"series_id": f.series.id, "name": f.name, "cadence": f.series.cadence.name}
            for f in sorted(used.values(), key=lambda f: f.name.lower())
        ],
        "method": "projected = posted balance today + pending rows still to post + each "
        "expected occurrence of the account's active recurring series up to the date (at its "
        "latest amount). Amounts are signed: negative is money out or owed.",
    }
    if outlook is not None:
        out["budgets"] = outlook.result(totals)
    sources = [account_result(p.account.id, account_row(p.account)) for p in projections]
    sources += [transaction_result(pending_rows[i]) for i in pending_ids if i in pending_rows]
    # The series that move the balances most first: they are kept when the room runs out.
    moved: dict[str, int] = defaultdict(int)
    for p in projections:
        for o in p.occurrences:
            moved[o.found.series.id] += abs(o.amount)
    sources += [series_result(f) for f in sorted(used.values(), key=lambda f: -moved[f.series.id])]
    if outlook is not None:
        sources += outlook.sources()
    return Sourced(out, sources[:MAX_SOURCES])


def _planned(projections: list[Projection]) -> dict[tuple[str, str, str], int]:
    """Return what the series take out, by (category, currency, month "YYYY-MM")."""
    out: dict[tuple[str, str, str], int] = defaultdict(int)
    for p in projections:
        for o in p.occurrences:
            if o.amount < 0 and o.found.category:
                key = (o.found.category, o.found.series.currency, o.day.strftime("%Y-%m"))
                out[key] -= o.amount
    return out


def _account_forecast(p: Projection) -> dict[str, Any]:
    cur = p.account.currency
    by_series: dict[str, list[Occurrence]] = defaultdict(list)
    for o in p.occurrences:
        by_series[o.found.series.id].append(o)
    ordered = sorted(by_series.items(), key=lambda kv: -sum(abs(o.amount) for o in kv[1]))
    out: dict[str, Any] = {
        "name": p.account.name,
        "kind": p.account.kind,
        "currency": cur,
        "balance_today": format_minor(p.account.balance_minor, cur),
        "pending": format_minor(sum(a for _, _, a in p.pending), cur),
        "recurring_in": format_minor(sum(o.amount for o in p.occurrences if o.amount > 0), cur),
        "recurring_out": format_minor(sum(o.amount for o in p.occurrences if o.amount < 0), cur),
        "projected_balance": format_minor(p.projected(), cur),
        "series": [
            {
                "series_id": ident,
                "name": items[0].found.name,
                "cadence": items[0].found.series.cadence.name,
                "dates": [o.day.isoformat() for o in items],
                "amount_each": format_minor(items[0].amount, cur),
                "amount_varies": items[0].found.series.varies,
                "total": format_minor(sum(o.amount for o in items), cur),
                "source": series_title(items[0].found),
            }
            for ident, items in ordered
        ],
    }
    if p.pending:
        out["pending_ids"] = [i for i, _, _ in p.pending]
    return out


def get_upcoming_bills(ctx: ToolContext, data: dict[str, Any]) -> Sourced:
    """Return the recurring payments expected in the next days, oldest first, per currency."""
    now = today()
    until = now + timedelta(days=data["days"] - 1)
    with ctx.db.read() as s:
        found = load(s, ctx.user_id, lookback(s, ctx.user_id, None))
    directions = ("out", "in") if data["include_income"] else ("out",)
    chosen = [f for f in found if f.series.direction in directions]
    occurrences = [o for o in expected(chosen, now, until) if o.day >= now]
    totals: dict[tuple[str, str], int] = defaultdict(int)
    for o in occurrences:
        totals[(o.found.series.currency, o.found.series.direction)] += abs(o.amount)
    out: dict[str, Any] = {
        "period": stated(now, until, f"the next {data['days']} days"),
        "count": len(occurrences),
        "bills": [_bill(o) for o in occurrences[:MAX_BILLS]],
        "totals": [
            {"currency": cur, "direction": way, "amount": format_minor(v, cur)}
            for (cur, way), v in sorted(totals.items())
        ],
        "note": "Expected from the user's active recurring series (transfers between their own "
        "accounts are not bills); amounts are positive, each series at its latest amount.",
    }
    if len(occurrences) > MAX_BILLS:
        out["truncated"] = True
    used = list({o.found.series.id: o.found for o in occurrences}.values())
    return Sourced(out, [series_result(f) for f in used[:MAX_SOURCES]])


def _bill(o: Occurrence) -> dict[str, Any]:
    f, cur = o.found, o.found.series.currency
    return {
        "date": o.day.isoformat(),
        "name": f.name,
        "series_id": f.series.id,
        "direction": f.series.direction,
        "amount": format_minor(abs(o.amount), cur),
        "currency": cur,
        "account": f.account,
        "category": f.category,
        "cadence": f.series.cadence.name,
        "amount_varies": f.series.varies,
        "price_changed": bool(f.series.changes),
    }

"""find_recurring_payments: the user's recurring series, money out and in, with the user's word.

Series are detected in tools/finance/series.py from the rows the money rule leaves (refunds
never make a series; transfers between the user's accounts only when asked, and always for a
forecast). The user's choices (`RecurringChoice`: confirmed, dismissed, renamed) are applied
here: a dismissed series is left out of lists, totals and forecasts.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import date
from typing import Any

from sqlalchemy import and_, select
from sqlalchemy.orm import Session

from domain.money import format_minor, percent
from models.finance import Account, Category, RecurringChoice, Transaction
from tools.finance.cites import search_result, txns_source
from tools.finance.cites import series_title as title_of
from tools.finance.clock import add_months, today
from tools.finance.flows import REFUND, TRANSFER, flow
from tools.finance.periods import MONTHS, Period, history
from tools.finance.queries import with_category
from tools.finance.series import Row, Series, detect_all
from tools.registry import MAX_SOURCES, Sourced, ToolContext

MAX_LISTED = 50
MAX_MONTHS = 36
# The rows a series cites: its latest ones (each cited id costs tokens on every later call).
CITED_ROWS = 24


@dataclass(frozen=True)
class Found:
    """A series as the tools show it: the detected series and the user's word on it."""

    series: Series
    name: str
    status: str  # detected, confirmed or dismissed
    flow: str
    category: str | None
    account: str
    active: bool


def lookback(s: Session, user_id: int, months: int | None) -> Period:
    """Return the history a detection reads: `months` back, else all of it (36 months at most)."""
    now = today()
    first, _ = history(s, user_id)
    earliest = add_months(now, -(months or MAX_MONTHS))
    start = max(first, earliest) if months is None else earliest
    if months is None:
        label = "all history" if first >= earliest else f"the last {MAX_MONTHS} months"
    else:
        label = f"the last {months} months"
    return Period(start, now, label)


def load(
    s: Session,
    user_id: int,
    period: Period,
    *,
    tolerance_pct: int = 10,
    fewest: int | None = None,
    transfers: bool = False,
) -> list[Found]:
    """Return the user's series over `period`, the user's choices applied (dismissed ones too)."""
    stmt = with_category(
        select(
            Transaction.id,
            Transaction.posted_on,
            Transaction.amount_minor,
            Transaction.merchant,
            Transaction.currency,
            Account.name,
            Category.name,
            flow(),
        ).join(Account, and_(Account.id == Transaction.account_id, Account.user_id == user_id)),
        user_id,
    ).where(
        Transaction.user_id == user_id,
        Transaction.posted_on >= period.start,
        Transaction.posted_on <= period.end,
    )
    rows = [
        Row(ident, day, int(amount), merchant, cur, account, category, kind)
        for ident, day, amount, merchant, cur, account, category, kind in s.execute(stmt)
        if kind != REFUND and (transfers or kind != TRANSFER)
    ]
    choices = {
        c.series_id: c
        for c in s.scalars(select(RecurringChoice).where(RecurringChoice.user_id == user_id))
    }
    now = today()
    out = []
    for series in detect_all(rows, tolerance_pct, fewest):
        choice = choices.get(series.id)
        last = series.last
        kinds = Counter(r.flow for r in series.rows).most_common(1)[0][0]
        out.append(
            Found(
                series=series,
                name=(choice.name if choice and choice.name else last.merchant),
                status=(choice.status if choice and choice.status else "detected"),
                flow=kinds,
                category=last.category,
                account=last.account,
                active=series.missed(now) < 2,
            )
        )
    return out


def find_recurring_payments(ctx: ToolContext, data: dict[str, Any]) -> Sourced:
    """Return the user's recurring series, biggest monthly amount first, each citing its rows."""
    with ctx.db.read() as s:
        period = lookback(s, ctx.user_id, data.get("lookback_months"))
        found = load(
            s,
            ctx.user_id,
            period,
            tolerance_pct=data["amount_tolerance_pct"],
            fewest=data.get("min_occurrences"),
            transfers=data["include_transfers"],
        )
    wanted = [f for f in found if _wanted(f, data)]
    wanted.sort(key=lambda f: (-f.series.monthly(), f.name.lower(), f.series.id))
    items = [item(f) for f in wanted[:MAX_LISTED]]
    out: dict[str, Any] = {
        "period": period.stated(),
        "since": period.start.isoformat(),
        "count": len(wanted),
        "recurring": items,
        "estimated_monthly_total": _totals(wanted, "out"),
        "estimated_monthly_income": _totals(wanted, "in"),
        "note": "Amounts are positive; direction says out (a payment) or in (income). "
        "estimated_monthly_total adds the active series of money out that are not transfers; "
        "estimated_monthly_income those of money in. Dismissed series are left out.",
    }
    if len(wanted) > MAX_LISTED:
        out["truncated"] = True
        out["note"] += f" Only the {MAX_LISTED} largest series are listed."
    return Sourced(out, [series_result(f) for f in wanted[:MAX_SOURCES]])


def _wanted(f: Found, data: dict[str, Any]) -> bool:
    if f.status == "dismissed" and not data["include_dismissed"]:
        return False
    if data.get("direction") and f.series.direction != data["direction"]:
        return False
    category = data.get("category")
    return not category or (f.category or "").lower() == category.strip().lower()


def _totals(found: list[Found], direction: str) -> list[dict[str, str]]:
    totals: dict[str, int] = defaultdict(int)
    for f in found:
        counted = f.active and f.status != "dismissed" and f.flow != TRANSFER
        if counted and f.series.direction == direction:
            totals[f.series.currency] += f.series.monthly()
    return [{"currency": c, "amount": format_minor(v, c)} for c, v in sorted(totals.items())]


def item(f: Found) -> dict[str, Any]:
    """Return one series as the tools list it."""
    s, cur = f.series, f.series.currency
    now = today()
    variants = list(dict.fromkeys(r.merchant for r in reversed(s.rows)))
    out: dict[str, Any] = {
        "series_id": s.id,
        "name": f.name,
        "merchant": s.last.merchant,
        "direction": s.direction,
        "flow": f.flow,
        "category": f.category,
        "account": f.account,
        "currency": cur,
        "cadence": s.cadence.name,
        "typical_amount": format_minor(s.typical, cur),
        "last_amount": format_minor(abs(s.last.amount), cur),
        "occurrences": len(s.rows),
        "first_date": s.rows[0].day.isoformat(),
        "last_date": s.last.day.isoformat(),
        "next_expected_date": s.next_expected(now).isoformat(),
        "next_expected_amount": format_minor(s.expected, cur),
        "active": f.active,
        "monthly_cost": format_minor(s.monthly(), cur),
        "amount_varies": s.varies,
        "price_changes": [price_change(c.before, c.after, c.since, cur) for c in s.changes],
        "status": f.status,
    }
    if len(variants) > 1:
        out["merchant_variants"] = variants[:5]
    return out


def price_change(before: int, after: int, since: date, currency: str) -> dict[str, Any]:
    """Return a price change as the tools state it: "15.49 -> 17.99 since March 2025"."""
    old, new = format_minor(before, currency), format_minor(after, currency)
    when = f"{MONTHS[since.month - 1]} {since.year}"
    return {
        "from": old,
        "to": new,
        "since": since.isoformat(),
        "change_pct": percent(after - before, before),
        "text": f"{old} -> {new} {currency} since {when}",
    }


def cited_ids(f: Found) -> str:
    """Return the ids of the rows a series cites (its latest), as get_transactions' ids filter."""
    return ",".join(str(r.id) for r in sorted(f.series.rows[-CITED_ROWS:], key=lambda r: r.id))


def series_source(f: Found) -> str:
    """Return the source of a series: its latest rows, by id."""
    return txns_source({"ids": cited_ids(f)})


def series_title(f: Found) -> str:
    """Return a series' title: its name, cadence and next amount."""
    s = f.series
    return title_of(f.name, s.cadence.name, format_minor(s.expected, s.currency), s.currency)


def series_result(f: Found) -> dict[str, Any]:
    """Return the search_result block of a series: the rows it rests on."""
    s, cur = f.series, f.series.currency
    shown = s.rows[-CITED_ROWS:]
    charges = ", ".join(f"{r.day.isoformat()} {format_minor(abs(r.amount), cur)}" for r in shown)
    which = "" if len(shown) == len(s.rows) else f" (its latest {len(shown)} of {len(s.rows)})"
    moved = "".join(
        f" Price {price_change(c.before, c.after, c.since, cur)['text']}." for c in s.changes
    )
    text = (
        f"{f.name}: {(s.direction == 'out' and 'paid') or 'received'} {s.cadence.name}, "
        f"{len(s.rows)} times from {s.rows[0].day.isoformat()} to {s.last.day.isoformat()}; "
        f"next expected {s.next_expected(today()).isoformat()}: "
        f"{format_minor(s.expected, cur)} {cur}.{moved} Rows{which}: {charges} {cur}."
    )
    return search_result(series_source(f), series_title(f), text)

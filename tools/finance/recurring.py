"""find_recurring_payments: charges repeating with a similar amount on a regular cadence."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import date, timedelta
from itertools import pairwise
from statistics import median_low
from typing import Any

from sqlalchemy import select

from domain.money import format_minor
from models.finance import Category, Transaction
from tools.finance.cites import recurring_result
from tools.finance.clock import add_months, days_in_month, today
from tools.finance.queries import spend_clause, with_category
from tools.finance.transactions import transactions_by_ids
from tools.registry import MAX_SOURCES, Sourced, ToolContext

MAX_LISTED = 50


@dataclass(frozen=True)
class Cadence:
    """A repeat interval: accepted gaps in days, its step, and charges per month."""

    name: str
    min_gap: int
    max_gap: int
    step_days: int
    step_months: int
    per_month: tuple[int, int]  # charges per month as a fraction (numerator, denominator)


CADENCES = (
    Cadence("weekly", 6, 8, 7, 0, (52, 12)),
    Cadence("biweekly", 13, 15, 14, 0, (26, 12)),
    Cadence("monthly", 27, 34, 0, 1, (1, 1)),
    Cadence("quarterly", 85, 97, 0, 3, (1, 3)),
    Cadence("yearly", 355, 375, 0, 12, (1, 12)),
)


@dataclass(frozen=True)
class Charge:
    """One charge of a merchant: its day, positive amount in minor units, and transaction id."""

    day: date
    amount: int
    merchant: str
    category: str | None
    id: int


@dataclass(frozen=True)
class Pattern:
    """A detected recurring charge; amounts are positive minor units."""

    cadence: Cadence
    typical_minor: int
    occurrences: int
    first: date
    last: date
    next_expected: date


def detect(
    charges: list[tuple[date, int]], min_occurrences: int, tolerance_pct: int
) -> Pattern | None:
    """Return the pattern of (day, positive amount) charges of one merchant, if regular."""
    typical = median_low(a for _, a in charges)
    similar = sorted(
        (d, a) for d, a in charges if abs(a - typical) * 100 <= tolerance_pct * typical
    )
    if len(similar) < min_occurrences:
        return None
    gaps = [(b[0] - a[0]).days for a, b in pairwise(similar)]
    gap = median_low(gaps)
    cadence = next((c for c in CADENCES if c.min_gap <= gap <= c.max_gap), None)
    if cadence is None:
        return None
    regular = sum(cadence.min_gap <= g <= cadence.max_gap for g in gaps)
    # Tolerate the odd skipped or shifted charge, but not an irregular habit.
    if regular * 4 < len(gaps) * 3:
        return None
    days = [d for d, _ in similar]
    return Pattern(
        cadence=cadence,
        typical_minor=median_low(a for _, a in similar),
        occurrences=len(similar),
        first=days[0],
        last=days[-1],
        next_expected=_next(days, cadence),
    )


def _next(days: list[date], cadence: Cadence) -> date:
    last = days[-1]
    if cadence.step_days:
        return last + timedelta(days=cadence.step_days)
    # Bill on the usual day of month, even after a short month clamped it (Jan 31 -> Feb 28).
    usual = Counter(d.day for d in days).most_common(1)[0][0]
    target = add_months(last.replace(day=1), cadence.step_months)
    return target.replace(day=min(usual, days_in_month(target.year, target.month)))


def find_recurring_payments(ctx: ToolContext, data: dict[str, Any]) -> Sourced:
    """Return the user's recurring charges found in recent history.

    Its search results: for each of the first payments listed, its latest charge of exactly
    the typical amount (the typical amount is the median of real charges, so one exists).
    """
    now = today()
    since = add_months(now, -data["lookback_months"])
    stmt = with_category(
        select(
            Transaction.merchant,
            Transaction.currency,
            Transaction.posted_on,
            Transaction.amount_minor,
            Category.name,
            Transaction.id,
        ),
        ctx.user_id,
    ).where(
        Transaction.user_id == ctx.user_id,
        Transaction.amount_minor < 0,
        Transaction.posted_on >= since,
        Transaction.posted_on <= now,
        spend_clause(),
    )
    groups: dict[tuple[str, str], list[Charge]] = defaultdict(list)
    with ctx.db.read() as s:
        order = (Transaction.posted_on, Transaction.id)
        for merchant, cur, day, amount, category, ident in s.execute(stmt.order_by(*order)):
            key = (merchant.strip().lower(), cur)
            groups[key].append(Charge(day, -amount, merchant, category, ident))
    # (monthly cost, item, its latest charge of exactly the typical amount)
    found: list[tuple[int, dict[str, Any], int]] = []
    for (_, cur), rows in groups.items():
        pattern = detect(
            [(r.day, r.amount) for r in rows], data["min_occurrences"], data["amount_tolerance_pct"]
        )
        if pattern is not None:
            last = rows[-1]
            typical = next(r.id for r in reversed(rows) if r.amount == pattern.typical_minor)
            found.append((*_item(pattern, cur, last.merchant, last.category, now), typical))
    found.sort(key=lambda found: (-found[0], found[1]["merchant"]))
    totals: dict[str, int] = defaultdict(int)
    for monthly, item, _ in found:
        if item["active"]:
            totals[item["currency"]] += monthly
    out: dict[str, Any] = {
        "since": since.isoformat(),
        "count": len(found),
        "recurring": [item for _, item, _ in found[:MAX_LISTED]],
        "estimated_monthly_total": [
            {"currency": cur, "amount": format_minor(v, cur)} for cur, v in sorted(totals.items())
        ],
    }
    if len(found) > MAX_LISTED:
        out["truncated"] = True
        out["note"] = f"Only the {MAX_LISTED} most expensive recurring payments are listed."
    cited = found[:MAX_SOURCES]
    with ctx.db.read() as s:
        charges = transactions_by_ids(s, ctx.user_id, [ident for _, _, ident in cited])
    return Sourced(out, [recurring_result(item, charges[ident]) for _, item, ident in cited])


def _item(
    p: Pattern, cur: str, merchant: str, category: str | None, now: date
) -> tuple[int, dict[str, Any]]:
    num, den = p.cadence.per_month
    monthly = (p.typical_minor * num * 2 + den) // (2 * den)  # rounded half up
    return monthly, {
        "merchant": merchant,
        "category": category,
        "typical_amount": format_minor(p.typical_minor, cur),
        "currency": cur,
        "cadence": p.cadence.name,
        "occurrences": p.occurrences,
        "first_date": p.first.isoformat(),
        "last_date": p.last.isoformat(),
        "next_expected_date": p.next_expected.isoformat(),
        # Two missed cycles in a row suggest a cancelled subscription.
        "active": (now - p.last).days <= 2 * p.cadence.max_gap,
        "monthly_cost": format_minor(monthly, cur),
    }

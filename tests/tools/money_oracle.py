"""The money rule worked out again in plain Python, from the rows, to check the tools against.

It reads the rule as docs/tools.md states it, not the SQL of tools/finance/flows.py: a
transfer is a row marked so, a row in a transfer category, or one leg of an opposite row in
another of the user's accounts (same currency) at most 4 days away; a refund is an inflow
marked so, in an expense category, or uncategorised with an earlier charge at the same
merchant (at least as large, within 365 days); other inflows are income, other outflows
spending. The user's marks win.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date


@dataclass(frozen=True)
class Money:
    """One row as the rule reads it."""

    id: int
    day: date
    amount: int  # signed minor units
    currency: str
    account: str
    merchant: str
    kind: str | None  # the category's kind, None when uncategorised
    mark: str | None = None


def flows(rows: list[Money]) -> dict[int, str]:
    """Return each row's flow: spending, refund, income or transfer."""
    return {r.id: _flow(r, rows) for r in rows}


def _flow(r: Money, rows: list[Money]) -> str:
    mark = r.mark or ""
    if mark == "transfer":
        return "transfer"
    if mark == "refund" and r.amount > 0:
        return "refund"
    if mark not in ("not_transfer", "refund") and (
        r.kind == "transfer" or (r.amount != 0 and any(_legs(r, o) for o in rows))
    ):
        return "transfer"
    if r.amount <= 0:
        return "spending"
    if mark == "not_refund":
        return "income"
    if r.kind == "expense":
        return "refund"
    if r.kind is None and any(_bought(r, o) for o in rows):
        return "refund"
    return "income"


def _legs(r: Money, o: Money) -> bool:
    return (
        o.amount == -r.amount
        and o.account != r.account
        and o.currency == r.currency
        and abs((o.day - r.day).days) <= 4
        and (o.mark or "") not in ("not_transfer", "refund")
    )


def _bought(r: Money, o: Money) -> bool:
    return (
        o.currency == r.currency
        and o.amount <= -r.amount
        and o.merchant.strip().lower() == r.merchant.strip().lower()
        and 0 <= (r.day - o.day).days <= 365
    )

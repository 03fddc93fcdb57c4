"""categorize_transactions: many of the user's transactions put in categories, one approval.

Like the single-row writes (tools/finance/writes.py): the preview reads in a read-only
transaction and changes nothing; the handler plans again inside its one write transaction,
locking the rows, and records its result there (`ToolContext.applied`), so the whole batch
changes once, or not at all.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from domain.money import format_minor
from models.finance import Category, Transaction
from tools.finance.queries import UNCATEGORIZED
from tools.registry import ToolContext, ToolInputError

# Rows the approval card lists; the summary counts every row.
PREVIEW_ROWS = 20


@dataclass(frozen=True)
class Move:
    """One row of the batch: the transaction, its category now, and the one it gets."""

    transaction: Transaction
    before: str | None
    after: Category


def categorize_transactions(ctx: ToolContext, data: dict[str, Any]) -> dict[str, Any]:
    """Set the categories of several of the user's transactions in one transaction."""
    with ctx.db.transaction() as s:
        moves = _plan(s, ctx.user_id, data["changes"], lock=True)
        for move in moves:
            move.transaction.category_id = move.after.id
        s.flush()
        changed = [m for m in moves if m.before != m.after.name]
        out = {
            "count": len(moves),
            "changed": len(changed),
            "by_category": _by_category(changed),
            "transactions": [
                {"id": m.transaction.id, "before": m.before, "after": m.after.name} for m in moves
            ],
        }
        ctx.applied(s, out)
    return out


def preview_categorize_transactions(ctx: ToolContext, data: dict[str, Any]) -> dict[str, Any]:
    """Describe what categorize_transactions would change, changing nothing."""
    with ctx.db.read() as s:
        moves = _plan(s, ctx.user_id, data["changes"], lock=False)
    changed = [m for m in moves if m.before != m.after.name]
    counted = ", ".join(f"{n} to {name}" for name, n in _by_category(changed).items())
    if not changed:
        summary = f"Keep all {len(moves)} transactions in the categories they already have"
    else:
        rows = "transaction" if len(changed) == 1 else "transactions"
        summary = f"Categorize {len(changed)} {rows}: {counted}"
        if kept := len(moves) - len(changed):
            summary += f" ({kept} already there)"
    changes = [
        {"field": _label(m.transaction), "before": m.before or UNCATEGORIZED, "after": m.after.name}
        for m in changed[:PREVIEW_ROWS]
    ]
    if len(changed) > PREVIEW_ROWS:
        summary += f"; the first {PREVIEW_ROWS} are listed"
    target = {"kind": "transactions", "ids": [m.transaction.id for m in moves]}
    return {"summary": summary, "changes": changes, "target": target}


def _plan(s: Session, user_id: int, changes: list[dict[str, Any]], *, lock: bool) -> list[Move]:
    ids = [int(c["transaction_id"]) for c in changes]
    if repeated := sorted(i for i, n in Counter(ids).items() if n > 1):
        raise ToolInputError("changes", f"each transaction once; repeated: {_ids(repeated)}.")
    # Locked in id order, so two batches sharing rows wait for each other and never deadlock.
    query = (
        select(Transaction)
        .where(Transaction.user_id == user_id, Transaction.id.in_(ids))
        .order_by(Transaction.id)
    )
    found = {t.id: t for t in s.scalars(query.with_for_update() if lock else query)}
    if missing := [i for i in ids if i not in found]:
        raise ToolInputError("changes", f"No transactions {_ids(missing)} among yours.")
    categories = list(s.scalars(select(Category).where(Category.user_id == user_id)))
    by_name = {c.name.lower(): c for c in categories}
    by_id = {c.id: c.name for c in categories}
    asked = [str(c["category"]).strip() for c in changes]
    unknown: dict[str, str] = {}  # each unknown name once, as first written
    for name in asked:
        if name.lower() not in by_name:
            unknown.setdefault(name.lower(), name)
    if unknown:
        known = ", ".join(sorted(c.name for c in categories)) or "(the user has none)"
        names = ", ".join(repr(u) for u in unknown.values())
        raise ToolInputError("changes", f"unknown category {names}. Use one of: {known}.")
    return [
        Move(found[i], by_id.get(found[i].category_id or 0), by_name[a.lower()])
        for i, a in zip(ids, asked, strict=True)
    ]


def _by_category(moves: list[Move]) -> dict[str, int]:
    """How many rows each category gets, most first (then by name)."""
    counts = Counter(m.after.name for m in moves)
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _label(t: Transaction) -> str:
    amount = f"{format_minor(t.amount_minor, t.currency)} {t.currency}"
    return f"{t.posted_on.isoformat()} {t.merchant} {amount} (id {t.id})"


def _ids(ids: list[int]) -> str:
    return ", ".join(map(str, ids))

"""The user's corrections to the money rule: what a transaction is, and their word on a series.

A transaction's mark (`transfer`, `not_transfer`, `refund`, `not_refund`) overrides what the
rule (tools/finance/flows.py) finds; clearing it gives the row back to the rule. A recurring
series is confirmed, dismissed or renamed by its id (tools/finance/recurring.py). Both stick:
every tool reads them.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import exc, select

from domain.errors import NotFound, Unprocessable
from models import RecurringChoice, Transaction
from models.db import Database
from tools.finance.transactions import transaction_by_id

IN_ONLY = ("refund", "not_refund")


def mark_flow(db: Database, user_id: int, transaction_id: int, mark: str | None) -> dict[str, Any]:
    """Set (or, with None, clear) a transaction's mark; return the row as the tools show it."""
    with db.transaction() as s:
        txn = s.get(Transaction, transaction_id, with_for_update=True)
        if txn is None or txn.user_id != user_id:
            raise NotFound("transaction", str(transaction_id))
        if mark in IN_ONLY and txn.amount_minor <= 0:
            raise Unprocessable(
                "Only money coming in can be marked a refund (or not one).", field="mark"
            )
        txn.flow_mark = mark
        s.flush()
        shown = transaction_by_id(s, user_id, transaction_id)
    assert shown is not None
    return shown


def choose_series(
    db: Database, user_id: int, series_id: str, data: dict[str, Any]
) -> dict[str, Any]:
    """Confirm, dismiss or rename a series (the fields given change); return the choice.

    With no field given nothing changes (and nothing is stored).
    """
    if not data:
        with db.read() as s:
            kept = s.scalar(
                select(RecurringChoice).where(
                    RecurringChoice.user_id == user_id, RecurringChoice.series_id == series_id
                )
            )
            return _choice(kept) if kept else {"series_id": series_id, "status": None, "name": None}
    for attempt in range(2):
        try:
            with db.transaction() as s:
                choice = s.scalar(
                    select(RecurringChoice)
                    .where(
                        RecurringChoice.user_id == user_id, RecurringChoice.series_id == series_id
                    )
                    .with_for_update()
                )
                if choice is None:
                    choice = RecurringChoice(user_id=user_id, series_id=series_id)
                    s.add(choice)
                if "status" in data:
                    choice.status = data["status"]
                if "name" in data:
                    choice.name = data["name"]
                s.flush()
                return _choice(choice)
        except exc.IntegrityError:
            if attempt:  # two first choices at once: the second one updates the first
                raise
    raise AssertionError("unreachable")


def forget_series(db: Database, user_id: int, series_id: str) -> None:
    """Forget the user's word on a series: it is shown as detected again."""
    with db.transaction() as s:
        choice = s.scalar(
            select(RecurringChoice).where(
                RecurringChoice.user_id == user_id, RecurringChoice.series_id == series_id
            )
        )
        if choice is None:
            raise NotFound("recurring series choice", series_id)
        s.delete(choice)


def _choice(choice: RecurringChoice) -> dict[str, Any]:
    return {"series_id": choice.series_id, "status": choice.status, "name": choice.name}

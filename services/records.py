"""The finance records a cited source names, for their owner only, as the read tools show them.

Sources are `txn:<id>`, `budget:<id>`, `account:<id>` (tools.finance.sources resolves them)
and `txns:<query>`, the rows behind a summary figure, which are listed a page at a time with
get_transactions itself. Another user's record and an unknown one are the same to a caller:
not found.
"""

from __future__ import annotations

from typing import Any

from domain.errors import NotFound, Unprocessable
from models.db import Database
from tools.finance.sources import resolve
from tools.finance.transactions import get_transactions
from tools.registry import ToolContext, ToolInputError

BAD_CURSOR = "Not a next_cursor of this query: ask again without cursor for the first page."
KINDS = {"txn": "transaction", "budget": "budget", "account": "account"}


def record(db: Database, user_id: int, kind: str, ident: int) -> dict[str, Any]:
    """Return the user's record behind the source `<kind>:<ident>`, or raise NotFound."""
    rows = resolve(db, user_id, f"{kind}:{ident}")
    if not rows:
        raise NotFound(KINDS[kind], str(ident))
    return rows[0]


def transactions(db: Database, user_id: int, query: dict[str, Any]) -> dict[str, Any]:
    """Return a page of the rows a `txns:<query>` source stands for, with count and totals.

    The filters mean exactly what they mean to get_transactions, which does the work; what it
    refuses (an unknown category or account, a period ending before it starts, another
    query's cursor) is a 422 naming the parameter.
    """
    try:
        found = get_transactions(ToolContext(user_id, db), query).result
    except ToolInputError as err:
        message = BAD_CURSOR if err.field == "cursor" else err.message
        raise Unprocessable(message, field=err.field) from err
    return {
        "transactions": found["transactions"],
        "count": found["count"],
        "totals": found["totals"],
        "next_cursor": found["next_cursor"],
    }

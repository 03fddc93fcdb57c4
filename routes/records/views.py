"""The caller's finance records that answers cite: a transaction, budget or account, and lists.

Each cited source resolves here (see docs/api.md): `txn:<id>`, `budget:<id>`, `account:<id>`
and `txns:<query>` (GET /api/transactions?<query>).
"""

from __future__ import annotations

from typing import Any

from flask import g

from routes.api import BEARER, Blueprint
from routes.auth import login_required
from routes.extensions import get_db
from routes.records.requests import TransactionsQuery
from routes.records.responses import AccountRecord, BudgetRecord, TransactionPage, TransactionRecord
from routes.responses import ErrorResponse
from services import records

bp = Blueprint("records", __name__, description="The caller's finance records answers cite.")

# Beyond a 32-bit id: 404, not an overflow; a non-integer id matches no route: 404 too.
ID = "int(max=2147483647)"

MISSING = "Not the caller's, or no such record."


@bp.get("/transactions")
@login_required
@bp.arguments(TransactionsQuery, location="query")
@bp.response(200, TransactionPage, description="Newest first unless `sort` says otherwise.")
@bp.doc(security=BEARER)
def transactions(query: dict[str, Any]) -> dict[str, Any]:
    """List the caller's transactions matching get_transactions' filters: a page, count, totals."""
    return records.transactions(get_db(), g.user_id, query)


@bp.get(f"/transactions/<{ID}:transaction_id>")
@login_required
@bp.response(200, TransactionRecord, description="The transaction (`txn:<id>`).")
@bp.alt_response(404, schema=ErrorResponse, description=MISSING)
@bp.doc(security=BEARER)
def transaction(transaction_id: int) -> dict[str, Any]:
    """Show one of the caller's transactions."""
    return records.record(get_db(), g.user_id, "txn", transaction_id)


@bp.get(f"/budgets/<{ID}:budget_id>")
@login_required
@bp.response(200, BudgetRecord, description="The budget (`budget:<id>`) over its month.")
@bp.alt_response(404, schema=ErrorResponse, description=MISSING)
@bp.doc(security=BEARER)
def budget(budget_id: int) -> dict[str, Any]:
    """Show one of the caller's budgets: limit, spent and status over its month."""
    return records.record(get_db(), g.user_id, "budget", budget_id)


@bp.get(f"/accounts/<{ID}:account_id>")
@login_required
@bp.response(200, AccountRecord, description="The account (`account:<id>`).")
@bp.alt_response(404, schema=ErrorResponse, description=MISSING)
@bp.doc(security=BEARER)
def account(account_id: int) -> dict[str, Any]:
    """Show one of the caller's accounts with its posted balance."""
    return records.record(get_db(), g.user_id, "account", account_id)

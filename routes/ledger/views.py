"""The caller's own records managed by hand: list and add accounts and categories, list
budgets, add, edit and delete transactions, keep category rules, correct what a transaction
is and keep their word on recurring series (records.py shows single records)."""

from __future__ import annotations

import re
from typing import Any

from flask import g

from domain.errors import NotFound
from routes.api import BEARER, Blueprint
from routes.auth import login_required
from routes.extensions import get_db
from routes.ledger.requests import (
    FlowMark,
    NewAccount,
    NewCategory,
    NewRule,
    NewTransaction,
    SeriesChoice,
    TransactionChange,
)
from routes.ledger.responses import (
    AccountList,
    BudgetList,
    CategoryList,
    CategoryRecord,
    RuleList,
    RuleRecord,
    SeriesChoiceRecord,
)
from routes.records.responses import AccountRecord, TransactionRecord
from routes.responses import ErrorResponse
from services import corrections, ledger
from services.imports import rules

bp = Blueprint("ledger", __name__, description="The caller's accounts, categories, budgets.")

ID = "int(max=2147483647)"

MISSING = "Not the caller's, or no such record."

SERIES_ID = re.compile(r"s[0-9a-f]{12}")


@bp.get("/accounts")
@login_required
@bp.response(200, AccountList)
@bp.doc(security=BEARER)
def accounts() -> dict[str, Any]:
    """List the caller's accounts with their posted balances."""
    return {"accounts": ledger.accounts(get_db(), g.user_id)}


@bp.post("/accounts")
@login_required
@bp.arguments(NewAccount)
@bp.response(201, AccountRecord)
@bp.alt_response(409, schema=ErrorResponse, description="The name is taken.")
@bp.doc(security=BEARER)
def create_account(data: dict[str, Any]) -> dict[str, Any]:
    """Add an account."""
    return ledger.create_account(get_db(), g.user_id, data)


@bp.get("/categories")
@login_required
@bp.response(200, CategoryList)
@bp.doc(security=BEARER)
def categories() -> dict[str, Any]:
    """List the caller's categories."""
    return {"categories": ledger.categories(get_db(), g.user_id)}


@bp.post("/categories")
@login_required
@bp.arguments(NewCategory)
@bp.response(201, CategoryRecord)
@bp.alt_response(409, schema=ErrorResponse, description="The name is taken.")
@bp.doc(security=BEARER)
def create_category(data: dict[str, Any]) -> dict[str, Any]:
    """Add a category."""
    return ledger.create_category(get_db(), g.user_id, data)


@bp.get("/budgets")
@login_required
@bp.response(200, BudgetList)
@bp.doc(security=BEARER)
def budgets() -> dict[str, Any]:
    """List the caller's budgets."""
    return {"budgets": ledger.budgets(get_db(), g.user_id)}


@bp.post("/transactions")
@login_required
@bp.arguments(NewTransaction)
@bp.response(201, TransactionRecord)
@bp.alt_response(404, schema=ErrorResponse, description="Not the caller's account.")
@bp.doc(security=BEARER)
def add_transaction(data: dict[str, Any]) -> dict[str, Any]:
    """Add a transaction by hand; a posted one moves its account's balance."""
    return ledger.add_transaction(get_db(), g.user_id, data)


@bp.patch(f"/transactions/<{ID}:transaction_id>")
@login_required
@bp.arguments(TransactionChange)
@bp.response(200, TransactionRecord)
@bp.alt_response(404, schema=ErrorResponse, description=MISSING)
@bp.doc(security=BEARER)
def edit_transaction(data: dict[str, Any], transaction_id: int) -> dict[str, Any]:
    """Change a transaction."""
    return ledger.edit_transaction(get_db(), g.user_id, transaction_id, data)


@bp.delete(f"/transactions/<{ID}:transaction_id>")
@login_required
@bp.alt_response(204, success=True, description="Deleted.")
@bp.alt_response(404, schema=ErrorResponse, description=MISSING)
@bp.doc(security=BEARER)
def delete_transaction(transaction_id: int) -> tuple[str, int]:
    """Delete a transaction."""
    ledger.delete_transaction(get_db(), g.user_id, transaction_id)
    return "", 204


@bp.get("/category-rules")
@login_required
@bp.response(200, RuleList)
@bp.doc(security=BEARER)
def category_rules() -> dict[str, Any]:
    """List the caller's category rules, which every import draft applies."""
    return {"rules": rules.listing(get_db(), g.user_id)}


@bp.post("/category-rules")
@login_required
@bp.arguments(NewRule)
@bp.response(201, RuleRecord)
@bp.doc(security=BEARER)
def create_rule(data: dict[str, Any]) -> dict[str, Any]:
    """Keep a rule: payee contains and/or signed amount range -> category."""
    return rules.create(get_db(), g.user_id, data)


@bp.delete(f"/category-rules/<{ID}:rule_id>")
@login_required
@bp.alt_response(204, success=True, description="Forgotten.")
@bp.alt_response(404, schema=ErrorResponse, description=MISSING)
@bp.doc(security=BEARER)
def delete_rule(rule_id: int) -> tuple[str, int]:
    """Forget a category rule."""
    rules.delete(get_db(), g.user_id, rule_id)
    return "", 204


@bp.put(f"/transactions/<{ID}:transaction_id>/flow")
@login_required
@bp.arguments(FlowMark)
@bp.response(200, TransactionRecord)
@bp.alt_response(404, schema=ErrorResponse, description=MISSING)
@bp.alt_response(422, schema=ErrorResponse, description="A refund mark on money going out.")
@bp.doc(security=BEARER)
def mark_flow(data: dict[str, Any], transaction_id: int) -> dict[str, Any]:
    """Correct what a transaction is: a transfer or not, a refund or not. Every tool obeys it."""
    return corrections.mark_flow(get_db(), g.user_id, transaction_id, data["mark"])


@bp.delete(f"/transactions/<{ID}:transaction_id>/flow")
@login_required
@bp.response(200, TransactionRecord)
@bp.alt_response(404, schema=ErrorResponse, description=MISSING)
@bp.doc(security=BEARER)
def unmark_flow(transaction_id: int) -> dict[str, Any]:
    """Forget the correction: the money rule decides what the transaction is again."""
    return corrections.mark_flow(get_db(), g.user_id, transaction_id, None)


@bp.put("/recurring/<series_id>")
@login_required
@bp.arguments(SeriesChoice)
@bp.response(200, SeriesChoiceRecord)
@bp.alt_response(404, schema=ErrorResponse, description="Not a series id.")
@bp.doc(security=BEARER)
def choose_series(data: dict[str, Any], series_id: str) -> dict[str, Any]:
    """Confirm, dismiss or rename a recurring series (its `series_id` from the recurring tools)."""
    return corrections.choose_series(get_db(), g.user_id, _series(series_id), data)


@bp.delete("/recurring/<series_id>")
@login_required
@bp.alt_response(204, success=True, description="Forgotten.")
@bp.alt_response(404, schema=ErrorResponse, description="No word kept on that series.")
@bp.doc(security=BEARER)
def forget_series(series_id: str) -> tuple[str, int]:
    """Forget the caller's word on a series: it is shown as detected again."""
    corrections.forget_series(get_db(), g.user_id, _series(series_id))
    return "", 204


def _series(series_id: str) -> str:
    """Return a path's series id, or 404: no series has another shape."""
    if not SERIES_ID.fullmatch(series_id):
        raise NotFound("recurring series", series_id)
    return series_id

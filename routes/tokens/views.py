"""API tokens of the caller: list, create (the secret shown once), revoke."""

from __future__ import annotations

from typing import Any

from flask import current_app, g

from routes.api import BEARER, Blueprint
from routes.auth import login_required
from routes.extensions import get_db
from routes.tokens.requests import TokenRequest
from routes.tokens.responses import NewToken, TokenList
from services import api_tokens

bp = Blueprint("tokens", __name__, description="The caller's API tokens.")


@bp.get("/tokens")
@login_required
@bp.alt_response(200, schema=TokenList, success=True, description="Tokens not revoked.")
@bp.doc(security=BEARER)
def index() -> dict[str, Any]:
    """List the caller's tokens that are not revoked; `current` marks the one in use."""
    return {"tokens": api_tokens.list_tokens(get_db(), g.user_id, g.token_id)}


@bp.post("/tokens")
@login_required
@bp.arguments(TokenRequest)
@bp.alt_response(201, schema=NewToken, success=True, description="The token, shown once.")
@bp.doc(security=BEARER)
def create(body: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """Issue a named token, optionally expiring; its `token` is never shown again."""
    return api_tokens.create_token(get_db(), g.user_id, body["name"], body["expires_at"]), 201


@bp.delete("/tokens/<int(max=2147483647):token_id>")  # beyond: 404, not an overflow
@login_required
@bp.alt_response(204, success=True, description="Revoked.")
@bp.doc(security=BEARER)
def revoke(token_id: int) -> tuple[str, int]:
    """Revoke a token at once: requests get 401, its open streams end within seconds."""
    api_tokens.revoke_token(get_db(), g.user_id, token_id)
    current_app.extensions["token_watcher"].revoked_here(token_id)
    return "", 204

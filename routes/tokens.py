"""API tokens of the caller: list, create (the secret shown once), revoke."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, current_app, g

from routes.auth import login_required
from routes.deps import get_db
from routes.errors import APIError
from routes.schemas import TokenRequest, parse_body
from services import tokens

bp = Blueprint("tokens", __name__)


@bp.get("/tokens")
@login_required
def index() -> dict[str, Any]:
    """List the caller's tokens that are not revoked; `current` marks the one in use."""
    return {"tokens": tokens.list_tokens(get_db(), g.user_id, g.token_id)}


@bp.post("/tokens")
@login_required
def create() -> tuple[dict[str, Any], int]:
    """Issue a named token, optionally expiring; its `token` is never shown again."""
    body = parse_body(TokenRequest())
    try:
        return tokens.create_token(get_db(), g.user_id, body["name"], body["expires_at"]), 201
    except tokens.TooManyTokens as err:
        raise APIError(
            409,
            "too_many_tokens",
            f"A user may hold {tokens.MAX_ACTIVE_TOKENS} usable tokens; revoke one first.",
        ) from err


@bp.delete("/tokens/<int:token_id>")
@login_required
def revoke(token_id: int) -> tuple[str, int]:
    """Revoke a token at once: requests get 401, its open streams end within seconds."""
    tokens.revoke_token(get_db(), g.user_id, token_id)
    watcher = current_app.extensions.get("token_watcher")
    if watcher is not None:
        watcher.revoked_here(token_id)
    return "", 204

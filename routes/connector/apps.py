"""Connected apps (the connector's OAuth clients a user allowed) and the write actions they
asked for over /mcp: list, revoke, approve or decline."""

from __future__ import annotations

from typing import Any

from flask import g

from routes.api import BEARER, Blueprint
from routes.auth import login_required
from routes.connector.requests import ActionDecision
from routes.connector.responses import ConnectedAppList, ConnectorAction, ConnectorActionList
from routes.extensions import get_actions, get_db
from routes.responses import ErrorResponse
from services.connected_apps import list_apps, revoke_app

bp = Blueprint("connected_apps", __name__, description="Apps connected through OAuth (/mcp).")


@bp.get("/connected-apps")
@login_required
@bp.alt_response(200, schema=ConnectedAppList, success=True, description="Not revoked.")
@bp.doc(security=BEARER)
def index() -> dict[str, Any]:
    """The apps connected to the caller's account, with their scopes and last use."""
    return {"apps": list_apps(get_db(), g.user_id)}


@bp.delete("/connected-apps/<int(max=2147483647):app_id>")
@login_required
@bp.alt_response(204, success=True, description="Revoked.")
@bp.alt_response(404, schema=ErrorResponse, description="No such app (or revoked already).")
@bp.doc(security=BEARER)
def revoke(app_id: int) -> tuple[str, int]:
    """Disconnect an app: its tokens are refused at once, on every worker."""
    revoke_app(get_db(), get_actions(), g.user_id, app_id)
    return "", 204


@bp.get("/connector-actions")
@login_required
@bp.alt_response(200, schema=ConnectorActionList, success=True, description="Waiting first.")
@bp.doc(security=BEARER)
def actions() -> dict[str, Any]:
    """The changes apps asked for over /mcp: waiting for a decision, decided, done."""
    return {"actions": get_actions().of_user(g.user_id)}


@bp.post("/connector-actions/<action_id>")
@login_required
@bp.arguments(ActionDecision)
@bp.alt_response(200, schema=ConnectorAction, success=True, description="Decided (and run).")
@bp.alt_response(409, schema=ErrorResponse, description="Decided the other way already.")
@bp.doc(security=BEARER)
def decide(body: dict[str, Any], action_id: str) -> dict[str, Any]:
    """Approve (it runs now, once) or decline a change an app asked for."""
    return get_actions().decide(g.user_id, action_id, body["approved"], body["reason"])

"""POST /mcp: our read tools as an MCP server (streamable HTTP, stateless, JSON answers)."""

from __future__ import annotations

from flask import Response, current_app, g, jsonify, request

from engine.errors import BadRequest
from routes.api import BEARER, Blueprint
from routes.auth import login_required
from routes.extensions import get_db
from services.mcp_server import answer

bp = Blueprint("mcp_server", __name__, description="Our read tools as an MCP server.")


@bp.post("/mcp")
@login_required
@bp.doc(security=BEARER)
def mcp() -> Response | tuple[str, int]:
    """One JSON-RPC message from an MCP client; the caller's token scopes it to their data."""
    message = request.get_json(silent=True)
    if message is None:
        raise BadRequest("Send one JSON-RPC message as JSON.")
    registry = current_app.extensions["engine"].deps.tools.registry
    reply = answer(message, g.user_id, get_db(), registry)
    if reply is None:
        return "", 202  # a notification is accepted with nothing to say
    return jsonify(reply)

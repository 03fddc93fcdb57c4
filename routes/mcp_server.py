"""POST /mcp: our read tools as an MCP server (streamable HTTP, stateless, JSON answers)."""

from __future__ import annotations

from typing import Any

from flask import current_app, g

from routes.api import BEARER, Blueprint
from routes.auth import login_required
from routes.extensions import get_db
from routes.requests import McpMessage
from routes.responses import McpReply
from services.mcp_server import answer

bp = Blueprint("mcp_server", __name__, description="Our read tools as an MCP server.")


@bp.post("/mcp")
@login_required
@bp.arguments(McpMessage)
@bp.alt_response(200, schema=McpReply, success=True, description="The JSON-RPC response.")
@bp.alt_response(202, success=True, description="A notification, accepted.")
@bp.doc(security=BEARER)
def mcp(message: dict[str, Any]) -> dict[str, Any] | tuple[str, int]:
    """One JSON-RPC message from an MCP client; the caller's token scopes it to their data."""
    registry = current_app.extensions["engine"].deps.tools.registry
    reply = answer(message, g.user_id, get_db(), registry)
    if reply is None:
        return "", 202  # a notification is accepted with nothing to say
    return reply

"""Where the model's tools come from (the tools panel), and users' MCP server credentials."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flask import current_app, g

from domain.errors import NotFound
from routes.api import BEARER, Blueprint
from routes.auth import login_required
from routes.extensions import get_db
from routes.tool_sources.requests import CredentialRequest
from routes.tool_sources.responses import ToolSourceList
from services.tool_sources import tool_sources

if TYPE_CHECKING:  # cryptography is imported only where MCP servers are configured
    from services.mcp_credentials import CredentialStore

bp = Blueprint("tool_sources", __name__, description="Tool sources and MCP credentials.")


@bp.get("/tools")
@login_required
@bp.alt_response(200, schema=ToolSourceList, success=True, description="Each source.")
@bp.doc(security=BEARER)
def index() -> dict[str, Any]:
    """The model's tools by source: built-in, Python modules, each MCP server with its state."""
    return {"sources": tool_sources(current_app.extensions["engine"].deps.tools)}


@bp.put("/mcp/<server>/credentials")
@login_required
@bp.arguments(CredentialRequest)
@bp.alt_response(204, success=True, description="Stored, encrypted.")
@bp.doc(security=BEARER)
def put_credentials(body: dict[str, Any], server: str) -> tuple[str, int]:
    """Store the caller's credential for an MCP server (encrypted; never shown again)."""
    _credentials(server).put(g.user_id, server, body["value"])
    return "", 204


@bp.delete("/mcp/<server>/credentials")
@login_required
@bp.alt_response(204, success=True, description="Forgotten.")
@bp.doc(security=BEARER)
def delete_credentials(server: str) -> tuple[str, int]:
    """Forget the caller's credential for an MCP server."""
    _credentials(server).delete(g.user_id, server)
    return "", 204


def _credentials(server: str) -> CredentialStore:
    from services.mcp_credentials import CredentialStore, fernet_key

    hub = current_app.extensions["engine"].deps.tools.hub
    if hub is None or not hub.takes_credential(server):
        raise NotFound("MCP server that takes credentials", server)
    settings = current_app.config["SETTINGS"]
    return CredentialStore(get_db(), fernet_key(settings.mcp_credentials_key, settings.secret_key))

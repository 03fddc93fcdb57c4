"""The connector's OAuth 2.1 endpoints (services/oauth/): the well-known metadata of `/mcp`
and of the authorization server, the consent page, token, registration and revocation.

They answer in OAuth's own shapes (RFC 6749 and RFC 7591 errors, form posts, redirects, a
page), not the API's, so they are a plain blueprint, documented in /openapi.json by their
path items (routes/connector/oauth_doc.py).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from authlib.common.urls import add_params_to_uri
from authlib.oauth2 import OAuth2Error
from flask import Blueprint, Flask, Response, jsonify, render_template, request

from domain.errors import Unauthorized
from routes.extensions import get_db, get_oauth, get_settings, public_base
from routes.site.web import PAGE_HEADERS
from services.api_tokens import authenticate
from services.connector_actions import ActionStore
from services.mcp_tools import McpTools
from services.oauth.cimd import LOOPBACK_HOSTS, is_document_url
from services.oauth.clients import Client
from services.oauth.server import Server
from services.oauth.tokens import MCP_PATH, Owner
from telemetry import audit

bp = Blueprint("oauth", __name__, template_folder="templates")
_PRINTABLE = re.compile(r"[\x20-\x7e]*")

PRM_PATH = "/.well-known/oauth-protected-resource"

# The authorization request's parameters the consent form carries back.
AUTHORIZE_PARAMS = (
    "response_type",
    "client_id",
    "redirect_uri",
    "scope",
    "state",
    "code_challenge",
    "code_challenge_method",
    "resource",
)

SCOPE_WORDS = {
    "read": "See your accounts, balances, transactions and budgets.",
    "write": "Ask to change your budgets and categories; each change waits for your approval "
    "in the chat.",
}

# Browser-based MCP clients read the metadata and call the token endpoint cross-origin;
# none of these answers depends on a cookie.
OPEN_CORS = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Allow-Methods": "GET, POST, OPTIONS",
    "Access-Control-Allow-Headers": "Authorization, Content-Type, MCP-Protocol-Version",
    "Access-Control-Max-Age": "600",
}


def init_connector(app: Flask) -> None:
    """Make the authorization server, the actions store and /mcp's tools; add the routes."""
    settings, db = app.config["SETTINGS"], app.extensions["db"]
    engine = app.extensions["engine"]
    app.extensions["oauth"] = Server(db, settings, engine.runtime.run, public_base)
    registry = engine.deps.tools.registry
    actions = app.extensions["connector_actions"] = ActionStore(db, registry, settings.timings)
    app.extensions["mcp_tools"] = McpTools(
        registry,
        db,
        actions,
        settings.mcp_server_writes,
        settings.secret_key,
        settings.timings.mcp_request_state,
    )
    app.register_blueprint(bp)


def metadata_url() -> str:
    """Where `/mcp`'s protected resource metadata is (RFC 9728's path for it)."""
    return f"{public_base()}{PRM_PATH}{MCP_PATH}"


@bp.get(PRM_PATH)
@bp.get(PRM_PATH + MCP_PATH)
def protected_resource() -> Response:
    """RFC 9728: `/mcp` is a protected resource, and this server authorizes it."""
    base = public_base()
    body = {
        "resource": f"{base}{MCP_PATH}",
        "authorization_servers": [base],
        "scopes_supported": ["read", "write"],
        "bearer_methods_supported": ["header"],
        "resource_name": "Finance chat",
        "resource_documentation": f"{base}/docs",
    }
    return _cached(jsonify(body))


@bp.get("/.well-known/oauth-authorization-server")
def authorization_server() -> Response:
    """RFC 8414: the authorization server's endpoints and what it supports."""
    return _cached(jsonify(get_oauth().metadata()))


@bp.get("/oauth/authorize")
def authorize() -> Response | tuple[str, int, dict[str, str]]:
    """The consent page: the client, where it sends the browser back, what it may do."""
    server = get_oauth()
    try:
        grant = server.get_consent_grant(end_user=None)
    except OAuth2Error as err:
        return _refused(server, err)
    return _consent(grant)


@bp.post("/oauth/authorize")
def decide() -> Response | tuple[str, int, dict[str, str]]:
    """The user's answer: Allow with their API token, or Deny."""
    server = get_oauth()
    try:
        grant = server.get_consent_grant(end_user=None)
    except OAuth2Error as err:
        return _refused(server, err)
    client: Client = grant.client
    if request.form.get("decision") != "allow":
        audit.record("oauth_consent", client=client.client_id, allowed=False)
        response: Response = server.create_authorization_response(grant_user=None, grant=grant)
        return response
    try:
        caller = authenticate(get_db(), request.form.get("api_token", "").strip() or "-")
    except Unauthorized as err:
        return _consent(grant, error=f"{err.message} Paste the token you sign in to the chat with.")
    audit.record("oauth_consent", user_id=caller.user_id, client=client.client_id, allowed=True)
    owner = Owner(caller.user_id, client.row_id)
    response = server.create_authorization_response(grant_user=owner, grant=grant)
    return response


@bp.post("/oauth/token")
def token() -> Response:
    """The token endpoint: a code (with its PKCE verifier) or a refresh token for tokens."""
    response: Response = get_oauth().create_token_response()
    return response


@bp.post("/oauth/register")
def register() -> Response:
    """RFC 7591 dynamic client registration (OAUTH_DYNAMIC_REGISTRATION)."""
    if not get_settings().oauth_dynamic_registration:
        return _oauth_error(
            404, "not_found", "Dynamic registration is off: use a metadata document."
        )
    if not isinstance(request.get_json(silent=True), dict):
        return _oauth_error(400, "invalid_client_metadata", "Send the metadata as a JSON object.")
    response: Response = get_oauth().create_endpoint_response("client_registration")
    return response


@bp.post("/oauth/revoke")
def revoke() -> Response:
    """RFC 7009: a client revokes one of its tokens."""
    response: Response = get_oauth().create_endpoint_response("revocation")
    return response


@bp.before_request
def _printable_ascii() -> Response | tuple[str, int, dict[str, str]] | None:
    """RFC 6749 Appendix A: every OAuth parameter is printable ASCII (a URI is ASCII too).
    Anything else is refused here as `invalid_request`, never echoed into an error."""
    if not request.path.startswith("/oauth/"):
        return None
    if all(
        _PRINTABLE.fullmatch(v) for values in (request.args, request.form) for v in values.values()
    ):
        return None
    description = "A parameter holds characters OAuth does not allow (printable ASCII only)."
    if request.path == "/oauth/authorize":
        page = render_template("oauth_error.html", error="invalid_request", description=description)
        return page, 400, _page_headers("")
    return _oauth_error(400, "invalid_request", description)


@bp.after_request
def _headers(response: Response) -> Response:
    if request.path.startswith("/.well-known/") or request.path in (
        "/oauth/token",
        "/oauth/register",
        "/oauth/revoke",
    ):
        response.headers.update(OPEN_CORS)
    return response


def _consent(grant: Any, error: str | None = None) -> tuple[str, int, dict[str, str]]:
    client: Client = grant.client
    redirect = grant.request.payload.redirect_uri or client.get_default_redirect_uri() or ""
    host = urlsplit(redirect).hostname or ""
    params = [(n, request.values[n]) for n in AUTHORIZE_PARAMS if n in request.values]
    page = render_template(
        "consent.html",
        client_name=client.name,
        client_id=client.client_id,
        client_kind="Its address"
        if is_document_url(client.client_id)
        else "It registered itself as",
        redirect_host=host,
        loopback=host in LOOPBACK_HOSTS,
        scopes=[SCOPE_WORDS[s] for s in grant.request.scope.split() if s in SCOPE_WORDS],
        params=params,
        error=error,
    )
    return page, 400 if error else 200, _page_headers(redirect)


def _refused(server: Server, err: OAuth2Error) -> Response | tuple[str, int, dict[str, str]]:
    """An authorization request we answer at the client's redirect URI when it is known
    (with RFC 9207's `iss`), else on a page: an unknown client or redirect is never followed."""
    if err.redirect_uri:
        response: Response = server.handle_error_response(request, err)
        response.location = add_params_to_uri(response.location, {"iss": public_base()})
        return response
    page = render_template("oauth_error.html", error=err.error, description=err.description or "")
    return page, 400, _page_headers("")


def _page_headers(redirect: str) -> dict[str, str]:
    """The page's policy: our own script and style; the form may go to us, and on (as a
    redirect) to the client's redirect URI."""
    parts = urlsplit(redirect)
    target = f" {parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else ""
    policy = "; ".join(
        [
            "default-src 'none'",
            "script-src 'self'",
            "style-src 'self'",
            "img-src 'self'",
            "connect-src 'none'",
            "base-uri 'none'",
            f"form-action 'self'{target}",
            "frame-ancestors 'none'",
        ]
    )
    return {**PAGE_HEADERS, "Content-Security-Policy": policy, "Cache-Control": "no-store"}


def _cached(response: Response) -> Response:
    response.headers["Cache-Control"] = "public, max-age=300"
    return response


def _oauth_error(status: int, error: str, description: str) -> Response:
    response = jsonify({"error": error, "error_description": description})
    response.status_code = status
    response.headers["Cache-Control"] = "no-store"
    return response

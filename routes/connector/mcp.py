"""POST /mcp: our tools as an MCP server (streamable HTTP, stateless, JSON answers), a
protected resource: an app's OAuth access token (bound to this resource) or an API token."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

from flask import g, request

from domain.errors import BearerChallenge, InsufficientScope, Unauthorized
from routes.api import BEARER, Blueprint
from routes.connector.oauth import metadata_url
from routes.connector.requests import McpMessage
from routes.connector.responses import McpReply
from routes.extensions import get_db, get_mcp_tools, get_oauth, public_base
from services.api_tokens import authenticate
from services.mcp_server import answer
from services.mcp_tools import ScopeMissing
from services.oauth.clients import SCOPES
from services.oauth.tokens import Bearer, resource_of

bp = Blueprint("mcp_server", __name__, description="Our tools as an MCP server.")

F = TypeVar("F", bound=Callable[..., Any])

# An access token the connector issued (services/oauth/tokens.py); any other is an API token.
ACCESS_PREFIX = "cba_"

SIGN_IN = (
    "Send 'Authorization: Bearer <token>': an access token this server's OAuth issued to your "
    "app (see WWW-Authenticate), or an API token."
)


def _challenge(**params: str) -> str:
    """A `Bearer` challenge naming `/mcp`'s metadata (RFC 6750 section 3, RFC 9728 5.1)."""
    fields = {**params, "resource_metadata": metadata_url()}
    quoted = ", ".join(
        f'{name}="{value.replace(chr(34), chr(39))}"' for name, value in fields.items()
    )
    return f"Bearer {quoted}"


def bearer() -> Bearer:
    """Who the request's token stands for, or a 401 with the challenge saying where to go."""
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise BearerChallenge(SIGN_IN, challenge=_challenge(scope=" ".join(SCOPES)))
    try:
        if token.startswith(ACCESS_PREFIX):
            return get_oauth().tokens.authenticate(token, resource_of(public_base()))
        caller = authenticate(get_db(), token)
    except Unauthorized as err:
        challenge = _challenge(error="invalid_token", error_description=err.message)
        raise BearerChallenge.of(err, challenge) from err
    # A static API token: the user's own key, with the same scoping as ever.
    return Bearer(caller.user_id, frozenset(SCOPES), "", api_token_id=caller.token_id)


def mcp_auth(view: F) -> F:
    """Require a token for /mcp; set `g.bearer` (and the access log's `g.user_id`)."""

    @wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        g.bearer = found = bearer()
        g.user_id, g.token_id = found.user_id, found.api_token_id
        return view(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


@bp.post("/mcp")
@mcp_auth
@bp.arguments(McpMessage)
@bp.alt_response(200, schema=McpReply, success=True, description="The JSON-RPC response.")
@bp.alt_response(202, success=True, description="A notification, accepted.")
@bp.alt_response(400, description="A JSON-RPC error: a 2026-07-28 envelope or header fault.")
@bp.alt_response(404, description="A JSON-RPC error: a 2026-07-28 method we do not serve.")
@bp.doc(security=BEARER)
def mcp(message: dict[str, Any]) -> tuple[dict[str, Any] | str, int]:
    """One JSON-RPC message from an MCP client; the caller's token scopes it to their data."""
    headers = {name.lower(): value for name, value in request.headers.items()}
    try:
        reply = answer(message, headers, request.headers.items(), g.bearer, get_mcp_tools())
    except ScopeMissing as err:
        challenge = _challenge(
            error="insufficient_scope",
            scope=" ".join(SCOPES),
            error_description=f"This call needs the '{err.scope}' scope.",
        )
        raise InsufficientScope(
            f"This token lacks the '{err.scope}' scope: authorize the app again with it.",
            challenge=challenge,
        ) from err
    if reply.body is None:
        return "", 202  # a notification is accepted with nothing to say
    return reply.body, reply.status

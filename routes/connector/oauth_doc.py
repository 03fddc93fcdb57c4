"""The connector's OAuth endpoints in /openapi.json: what routes/connector/oauth.py answers, in
OAuth's own shapes (RFC 6749, 7009, 7591, 8414, 9728), written as OpenAPI path items."""

from __future__ import annotations

from typing import Any

TAG = "oauth"

DESCRIPTION = (
    "The connector's OAuth 2.1 authorization server and /mcp's protected resource metadata. "
    "They answer in OAuth's own shapes (RFC 6749 errors, form posts, redirects, a page), "
    "not the API's error shape."
)

_JSON_OBJECT = {"type": "object", "additionalProperties": True}

_OAUTH_ERROR = {
    "type": "object",
    "required": ["error"],
    "properties": {"error": {"type": "string"}, "error_description": {"type": "string"}},
}

_PAGE = {"content": {"text/html": {"schema": {"type": "string"}}}}


def _json(description: str, schema: dict[str, Any] = _JSON_OBJECT) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _form(*required: str, optional: tuple[str, ...] = ()) -> dict[str, Any]:
    fields = {name: {"type": "string"} for name in (*required, *optional)}
    schema = {"type": "object", "required": list(required), "properties": fields}
    return {"required": True, "content": {"application/x-www-form-urlencoded": {"schema": schema}}}


_AUTHORIZE_QUERY = [
    {"name": name, "in": "query", "required": name != "state", "schema": {"type": "string"}}
    for name in (
        "response_type",
        "client_id",
        "redirect_uri",
        "scope",
        "state",
        "code_challenge",
        "code_challenge_method",
        "resource",
    )
]

_REFUSED = _json("The request is refused (an OAuth error).", _OAUTH_ERROR)

_REDIRECT = {"description": "Back to the client's redirect URI with a code, or an error."}
# RFC 6749 4.1.2.1: an unknown client or redirect URI is never redirected to; the user is told.
_NOT_SENT_BACK = {
    "description": "A page saying why: the client or its redirect URI is not one registered.",
    **_PAGE,
}

PATHS: dict[str, dict[str, Any]] = {
    "/.well-known/oauth-protected-resource": {
        "get": {
            "summary": "RFC 9728: /mcp's protected resource metadata.",
            "responses": {"200": _json("The metadata.")},
        }
    },
    "/.well-known/oauth-protected-resource/mcp": {
        "get": {
            "summary": "RFC 9728: /mcp's protected resource metadata, at the path of /mcp.",
            "responses": {"200": _json("The metadata.")},
        }
    },
    "/.well-known/oauth-authorization-server": {
        "get": {
            "summary": "RFC 8414: the authorization server's metadata.",
            "responses": {"200": _json("The metadata.")},
        }
    },
    "/oauth/authorize": {
        "get": {
            "summary": "The consent page: the client, its redirect host and the scopes it asks.",
            "parameters": _AUTHORIZE_QUERY,
            "responses": {
                "200": {"description": "The consent page.", **_PAGE},
                "302": _REDIRECT,
                "400": _NOT_SENT_BACK,
            },
        },
        "post": {
            "summary": "The user's answer: allow (with their API token) or deny.",
            "requestBody": _form("decision", optional=("api_token",)),
            "responses": {
                "200": {"description": "The consent page again, saying why.", **_PAGE},
                "302": _REDIRECT,
                "400": _NOT_SENT_BACK,
            },
        },
    },
    "/oauth/token": {
        "post": {
            "summary": "Tokens for an authorization code (with its PKCE verifier) or a refresh "
            "token.",
            "requestBody": _form(
                "grant_type",
                optional=(
                    "code",
                    "redirect_uri",
                    "code_verifier",
                    "refresh_token",
                    "client_id",
                    "resource",
                ),
            ),
            "responses": {"200": _json("The tokens."), "400": _REFUSED, "401": _REFUSED},
        }
    },
    "/oauth/register": {
        "post": {
            "summary": "RFC 7591 dynamic client registration (OAUTH_DYNAMIC_REGISTRATION).",
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": _JSON_OBJECT}},
            },
            "responses": {
                "201": _json("The registered client."),
                "400": _REFUSED,
                "404": _json("Dynamic registration is off.", _OAUTH_ERROR),
            },
        }
    },
    "/oauth/revoke": {
        "post": {
            "summary": "RFC 7009: a client revokes one of its tokens.",
            "requestBody": _form("token", optional=("token_type_hint", "client_id")),
            "responses": {
                "200": {"description": "Revoked (or already unknown)."},
                "400": _REFUSED,
                "401": _json("The client is not known (RFC 7009 2.2.1).", _OAUTH_ERROR),
            },
        }
    },
}

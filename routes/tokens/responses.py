"""Response schemas of API tokens: a token as listed, and a new one with its secret."""

from __future__ import annotations

from marshmallow import Schema, fields

from routes.responses import Open


class Token(Open):
    """An API token as its owner sees it: never the secret."""

    id = fields.Integer(required=True)
    name = fields.String(required=True, allow_none=True)
    created_at = fields.String(required=True, allow_none=True, metadata={"format": "date-time"})
    expires_at = fields.String(required=True, allow_none=True, metadata={"format": "date-time"})
    last_used_at = fields.String(
        required=True,
        allow_none=True,
        metadata={"format": "date-time", "description": "Updated at most once a minute."},
    )
    expired = fields.Boolean(required=True)
    current = fields.Boolean(required=True, metadata={"description": "The token of this request."})


class NewToken(Token):
    """A token just issued, with its secret, shown this once."""

    token = fields.String(required=True, metadata={"description": "Send as a Bearer token."})


class TokenList(Schema):
    """The caller's tokens that are not revoked, newest first."""

    tokens = fields.List(fields.Nested(Token), required=True)

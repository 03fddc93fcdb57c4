"""Request schemas of tool sources: a user's credential for an MCP server."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from routes.requests import storable


class CredentialRequest(Schema):
    """Body of PUT /api/mcp/<server>/credentials."""

    value = fields.String(
        required=True,
        validate=[validate.Length(min=1, max=4096), storable],
        metadata={"description": "The secret; it fills `{credential}` in the server's headers."},
    )

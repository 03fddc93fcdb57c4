"""Request schemas of tool sources: a user's credential for an MCP server."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from routes.requests import OneLine, storable


class CredentialRequest(Schema):
    """Body of PUT /api/mcp/<server>/credentials."""

    value = fields.String(
        required=True,
        # One line, no control character: a newline pasted with it would break the header
        # it fills (422, and the value is never logged or echoed).
        validate=[validate.Length(min=1, max=4096), OneLine(blank=False), storable],
        metadata={"description": "The secret; it fills `{credential}` in the server's headers."},
    )

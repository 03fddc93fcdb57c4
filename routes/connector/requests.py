"""Request schemas of the connector: an MCP JSON-RPC message, and a decision on an action an
app asked for."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from routes.requests import storable


class McpMessage(Schema):
    """Body of POST /mcp: one JSON-RPC 2.0 request or notification of an MCP client."""

    jsonrpc = fields.String(required=True, validate=validate.OneOf(["2.0"]))
    id = fields.Raw(
        load_default=None,
        allow_none=True,
        metadata={"description": "A request's id (string or number); none: a notification."},
    )
    method = fields.String(required=True, validate=validate.Length(min=1, max=200))
    params = fields.Dict(load_default=dict)


class ActionDecision(Schema):
    """Body of POST /api/connector-actions/<id>."""

    approved = fields.Boolean(required=True)
    reason = fields.String(
        load_default=None, allow_none=True, validate=[validate.Length(max=500), storable]
    )

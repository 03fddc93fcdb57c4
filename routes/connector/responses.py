"""Response schemas of the connector: an MCP reply, the user's connected apps and the actions
they wait to have approved."""

from __future__ import annotations

from marshmallow import Schema, fields

from routes.chat.responses import Approval
from routes.responses import Open


class McpReply(Open):
    """A JSON-RPC 2.0 response: `result`, or `error` (`code`, `message`)."""

    jsonrpc = fields.String(required=True)
    id = fields.Raw(required=True, allow_none=True)
    result = fields.Dict()
    error = fields.Dict()


class ConnectedApp(Open):
    """An app the user connected: who it is, where it redirects, what it may do."""

    id = fields.Integer(required=True)
    client_id = fields.String(required=True, metadata={"description": "Ours, or its https URL."})
    name = fields.String(required=True)
    registration = fields.String(required=True, metadata={"enum": ["metadata document", "dynamic"]})
    redirect_hosts = fields.List(fields.String(), required=True)
    scopes = fields.List(fields.String(), required=True, metadata={"description": "read, write"})
    connected_at = fields.String(required=True)
    last_used_at = fields.String(required=True, allow_none=True)


class ConnectedAppList(Schema):
    """The user's connected apps, most recently used first."""

    apps = fields.List(fields.Nested(ConnectedApp), required=True)


class ConnectorAction(Approval):
    """A write an app asked for over /mcp: an approval without a turn."""

    class Meta:
        exclude = ("turn_id", "tool_use_id")

    id = fields.String(required=True)
    client = fields.String(required=True, metadata={"description": "The app that asked."})


class ConnectorActionList(Schema):
    """The newest actions, those waiting for a decision first."""

    actions = fields.List(fields.Nested(ConnectorAction), required=True)

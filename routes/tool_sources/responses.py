"""Response schemas of tool sources: the model's tools by source, each with its state."""

from __future__ import annotations

from marshmallow import Schema, fields


class SourceTool(Schema):
    """One tool of a source: the name the model calls it by."""

    name = fields.String(required=True)
    remote = fields.String(metadata={"description": "An MCP tool's name on its server."})
    description = fields.String(metadata={"description": "What the model is told it does."})
    read_only = fields.Boolean(
        metadata={"description": "Runs without an approval (MCP: the operator marked it so)."}
    )
    annotations = fields.Dict(
        allow_none=True, metadata={"description": "MCP: the server's hints, never trusted."}
    )


class ToolSource(Schema):
    """Where some of the model's tools come from, and whether it answers now."""

    name = fields.String(required=True)
    kind = fields.String(required=True, metadata={"enum": ["built-in", "python", "mcp"]})
    state = fields.String(required=True, metadata={"enum": ["up", "connecting", "down"]})
    tools = fields.List(fields.Nested(SourceTool), required=True)


class ToolSourceList(Schema):
    """The model's tools by source."""

    sources = fields.List(fields.Nested(ToolSource), required=True)

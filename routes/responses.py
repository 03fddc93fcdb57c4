"""Response schemas every resource shares: the open object and the one error shape."""

from __future__ import annotations

from marshmallow import Schema, fields


class Open(Schema):
    """A response object that may gain fields: clients ignore what they do not know."""

    class Meta:
        unknown = "include"


class ErrorBody(Schema):
    """The error itself."""

    code = fields.String(required=True, metadata={"description": "Machine-readable code."})
    message = fields.String(required=True, metadata={"description": "What to do about it."})
    details = fields.Dict(required=True, metadata={"description": "Per-field messages."})


class ErrorResponse(Schema):
    """The one error shape of every 4xx and 5xx."""

    error = fields.Nested(ErrorBody, required=True)

"""Response schemas of the site's own endpoints: liveness."""

from __future__ import annotations

from marshmallow import Schema, fields


class Health(Schema):
    """The server and its database answer."""

    status = fields.String(required=True)

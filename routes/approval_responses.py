"""Response schemas of conversation control: approvals of actions, and queued turns."""

from __future__ import annotations

from marshmallow import Schema, fields

from routes.responses import Open


class Approval(Open):
    """An action (a side-effect tool call) the user approves or declines."""

    turn_id = fields.String(required=True, metadata={"description": "The turn that asked."})
    tool_use_id = fields.String(required=True)
    name = fields.String(required=True)
    input = fields.Dict(required=True)
    preview = fields.Dict(
        required=True, metadata={"description": "{summary, changes: [{field, before, after}]}"}
    )
    status = fields.String(
        required=True,
        metadata={"enum": ["awaiting_approval", "approved", "running", "done"]},
    )
    approval = fields.String(
        required=True, allow_none=True, metadata={"enum": ["approved", "declined", None]}
    )
    decided_by = fields.Integer(required=True, allow_none=True)
    decided_at = fields.String(required=True, allow_none=True)
    reason = fields.String(required=True, allow_none=True)
    result = fields.List(fields.Dict(), required=True, allow_none=True)
    is_error = fields.Boolean(required=True)
    requested_at = fields.String(required=True, allow_none=True)
    finished_at = fields.String(required=True, allow_none=True)


class ApprovalList(Schema):
    """Approvals, oldest first."""

    approvals = fields.List(fields.Nested(Approval), required=True)


class ActionList(Schema):
    """Actions the user approved that ran, newest first."""

    actions = fields.List(fields.Nested(Approval), required=True)


class ApprovalDecided(Approval):
    """The decided approval, and the turn that goes on with it (once all are decided)."""

    continuation_turn_id = fields.String(
        required=True,
        allow_none=True,
        metadata={"description": "Runs now, or waits `queued` for a place (its events then)."},
    )
    events_url = fields.String(required=True, allow_none=True)


class QueuedTurn(Open):
    """A message waiting for the running turn to end."""

    turn_id = fields.String(required=True)
    message_id = fields.String(required=True, allow_none=True)
    text = fields.String(required=True, allow_none=True)
    created_at = fields.String(required=True)

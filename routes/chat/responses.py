"""Response schemas of chats: sessions, messages, turns, their streams, approvals and queued
turns, for the OpenAPI document (views return plain dicts)."""

from __future__ import annotations

from marshmallow import Schema, fields

from routes.responses import Open
from streaming.wire.events import EVENT_TYPES, TURN_STATUSES


class Usage(Open):
    """Token totals."""

    input_tokens = fields.Integer()
    output_tokens = fields.Integer()
    total_tokens = fields.Integer()
    model_calls = fields.Integer()


class Cost(Open):
    """Estimated cost."""

    currency = fields.String()
    amount = fields.String(metadata={"description": "Decimal US dollars."})
    unpriced_models = fields.List(fields.String())


class Session(Open):
    """A chat session."""

    id = fields.String(required=True)
    title = fields.String(required=True, allow_none=True)
    created_at = fields.String(required=True, metadata={"format": "date-time"})
    updated_at = fields.String(
        required=True,
        metadata={"format": "date-time", "description": "Its last activity: a turn, a rename."},
    )


class SessionMatch(Schema):
    """Where a search found its words in a session."""

    in_ = fields.String(data_key="in", required=True, metadata={"enum": ["title", "messages"]})
    snippet = fields.String(required=True, metadata={"description": "The words around it."})


class ListedSession(Session):
    """A session in a list; with a search (`q`), where it matched."""

    match = fields.Nested(SessionMatch, metadata={"description": "Only when searching (`q`)."})


class SessionPage(Schema):
    """One page of sessions, newest first."""

    sessions = fields.List(fields.Nested(ListedSession), required=True)
    next_cursor = fields.String(required=True, allow_none=True)
    # marshmallow takes declared fields off the class, so Schema.partial is not shadowed.
    partial = fields.Boolean(  # type: ignore[assignment]
        required=True,
        metadata={
            "description": "A search stopped at its time or work budget: the page may hold "
            "fewer sessions than `limit` (even none); ask again from `next_cursor`."
        },
    )


class Message(Open):
    """A stored message; `content` is Anthropic-format blocks."""

    id = fields.String(required=True)
    role = fields.String(required=True)
    content = fields.List(fields.Dict(), required=True)
    partial_content = fields.List(fields.Dict(), required=True, allow_none=True)
    status = fields.String(required=True)
    stop_reason = fields.String(required=True, allow_none=True)
    usage = fields.Dict(required=True, allow_none=True)
    model = fields.String(required=True, allow_none=True)
    turn_id = fields.String(required=True, allow_none=True)
    parent_id = fields.String(
        required=True, allow_none=True, metadata={"description": "The message it follows."}
    )
    sibling_ids = fields.List(
        fields.String(),
        required=True,
        metadata={"description": "Its versions (itself included), oldest first: '2 / 3'."},
    )
    events = fields.List(
        fields.List(fields.Raw()),
        metadata={
            "description": "Only with `?events=true`: the `[event, data]` pairs that show the "
            "message, as its stream ended (none for a question or a discarded attempt)."
        },
    )


def _earlier() -> fields.String:
    return fields.String(
        required=True,
        allow_none=True,
        metadata={
            "description": "`before` of the page of messages just before these "
            "(`GET /api/sessions/<id>/messages?before=`); null when these start the branch."
        },
    )


class MessagePage(Schema):
    """One page of a session's messages, oldest first."""

    messages = fields.List(fields.Nested(Message), required=True)
    next_cursor = fields.String(required=True, allow_none=True)
    earlier_cursor = _earlier()


class SessionDetail(Session):
    """A session with its newest messages, running turn, usage and cost."""

    messages = fields.List(
        fields.Nested(Message),
        required=True,
        metadata={"description": "The newest messages of the active branch (SESSION_MESSAGES)."},
    )
    earlier_cursor = _earlier()
    message_count = fields.Integer(
        required=True, metadata={"description": "Messages of the active branch in all."}
    )
    running_turn_id = fields.String(required=True, allow_none=True)
    active_leaf_id = fields.String(required=True, allow_none=True)
    # By name: they are defined further down.
    queued = fields.List(fields.Nested("QueuedTurn"), required=True)
    approvals = fields.List(
        fields.Nested("Approval"), required=True, metadata={"description": "Awaiting a decision."}
    )
    usage = fields.Nested(Usage, required=True)
    cost = fields.Nested(Cost, required=True)


class TurnStarted(Schema):
    """A started (or queued) turn."""

    turn_id = fields.String(required=True)
    session_id = fields.String(required=True)
    user_message_id = fields.String(required=True)
    status = fields.String(required=True, metadata={"enum": ["running", "queued"]})
    interrupted_turn_id = fields.String(
        required=True, allow_none=True, metadata={"description": "Asked to stop (interrupt)."}
    )
    events_url = fields.String(required=True, metadata={"description": "Signed, expiring."})


class TurnError(Schema):
    """Why a turn failed."""

    code = fields.String(required=True)
    message = fields.String(required=True, allow_none=True)


class Turn(Open):
    """A turn's status, usage and cost."""

    id = fields.String(required=True)
    session_id = fields.String(required=True)
    status = fields.String(required=True, metadata={"enum": list(TURN_STATUSES)})
    continues = fields.String(
        required=True, allow_none=True, metadata={"description": "The paused turn it goes on from."}
    )
    continued_by = fields.String(
        required=True,
        allow_none=True,
        metadata={"description": "The turn that went on once its approvals were decided."},
    )
    rounds = fields.Integer(required=True)
    created_at = fields.String(required=True)
    finished_at = fields.String(required=True, allow_none=True)
    error = fields.Nested(TurnError, required=True, allow_none=True)
    usage = fields.Nested(Usage, required=True)
    cost = fields.Nested(Cost, required=True)
    events_url = fields.String(required=True)


class CancelAccepted(Schema):
    """A cancel request was taken."""

    turn_id = fields.String(required=True)
    status = fields.String(required=True)
    cancel_requested = fields.Boolean(required=True)


class UICancelAccepted(Schema):
    """A chat's cancel: the running turn, if any."""

    turn_id = fields.String(required=True, allow_none=True)
    cancel_requested = fields.Boolean(required=True)


class UIChatMessages(Open):
    """The chat's stored conversation as AI SDK UIMessages."""

    id = fields.String(required=True)
    session_id = fields.String(required=True)
    messages = fields.List(fields.Dict(), required=True)
    running_turn_id = fields.String(required=True, allow_none=True)
    resume_headers = fields.Dict(required=True, allow_none=True)


# Before OpenAPI 3.2, an event stream's `schema` describes one event (as schemathesis reads it).
SSE = {
    "text/event-stream": {
        "schema": {
            "type": "object",
            "description": "One event; `data` is its JSON (docs/protocol.md: the event protocol).",
            "required": ["event", "data", "id"],
            "properties": {
                "id": {"type": "string", "pattern": "^[0-9]{1,18}$"},
                "event": {"type": "string", "enum": list(EVENT_TYPES)},
                "data": {"type": "string", "contentMediaType": "application/json"},
            },
        }
    }
}

UI_SSE = {
    "text/event-stream": {
        "schema": {
            "type": "object",
            "description": "One UI message chunk as JSON in `data`; the last is `[DONE]`.",
            "required": ["data"],
            "properties": {"data": {"type": "string"}},
        }
    }
}


def link(path: str, method: str, **parameters: str) -> dict[str, object]:
    """An OpenAPI link to the operation at `path`/`method`, fed from this response."""
    ref = "#/paths/" + path.replace("~", "~0").replace("/", "~1") + "/" + method
    return {"operationRef": ref, "parameters": parameters}


SESSION = "/api/sessions/{session_id}"

TURN = "/api/turns/{turn_id}"

NEW_SESSION_LINKS = {
    "StartTurn": link(SESSION + "/turns", "post", session_id="$response.body#/id"),
    "ShowSession": link(SESSION, "get", session_id="$response.body#/id"),
    "ListMessages": link(SESSION + "/messages", "get", session_id="$response.body#/id"),
    "DeleteSession": link(SESSION, "delete", session_id="$response.body#/id"),
}

NEW_TURN_LINKS = {
    "ShowTurn": link(TURN, "get", turn_id="$response.body#/turn_id"),
    "ReadEvents": link(TURN + "/events", "get", turn_id="$response.body#/turn_id"),
    "CancelTurn": link(TURN + "/cancel", "post", turn_id="$response.body#/turn_id"),
    "DeleteSession": link(SESSION, "delete", session_id="$response.body#/session_id"),
}

TURN_HEADERS = {
    "X-Session-Id": {
        "description": "The turn's session.",
        "required": True,
        "schema": {"type": "string"},
    },
    "X-Turn-Id": {"description": "The turn.", "required": True, "schema": {"type": "string"}},
}


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

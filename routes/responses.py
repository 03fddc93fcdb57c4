"""Marshmallow schemas of the responses, for the OpenAPI document (views return plain dicts)."""

from __future__ import annotations

from marshmallow import Schema, fields

from streaming.wire.events import EVENT_TYPES, TURN_STATUSES


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
    # By name: they live in routes/approval_responses.py.
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


class Health(Schema):
    """The server and its database answer."""

    status = fields.String(required=True)


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


class SourceTool(Schema):
    """One tool of a source: the name the model calls it by."""

    name = fields.String(required=True)
    remote = fields.String(metadata={"description": "An MCP tool's name on its server."})
    read_only = fields.Boolean(metadata={"description": "MCP: the operator marked it read-only."})
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


class McpReply(Open):
    """A JSON-RPC 2.0 response: `result`, or `error` (`code`, `message`)."""

    jsonrpc = fields.String(required=True)
    id = fields.Raw(required=True, allow_none=True)
    result = fields.Dict()
    error = fields.Dict()

"""Request schemas of chats: sessions, turns, their event streams and approvals, the
one-request chat and the AI SDK's chat endpoints (bodies, query strings and headers)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from marshmallow import EXCLUDE, Schema, ValidationError, fields, post_load, validate
from marshmallow.types import Validator

from domain.errors import ContentTooLarge
from engine.store.starts import Ask
from routes.extensions import get_settings
from routes.requests import NO_NUL, NON_BLANK, WS, OneLine, storable
from services import ui_chats
from streaming.wire.events import BUSY_POLICIES

# An event id: digits only, at most 18 of them (any such number fits in 64 bits).
EVENT_ID = r"\A[0-9]{1,18}\Z"

MESSAGE_ID: list[Validator] = [validate.Length(min=1, max=64), validate.Regexp(NO_NUL), storable]

MESSAGE: list[Validator] = [
    validate.Regexp(NON_BLANK, error="The message must not be empty (nor contain NUL characters)."),
    storable,
]

IF_BUSY = fields.String(
    validate=validate.OneOf(BUSY_POLICIES),
    metadata={
        "description": "While a turn runs on the session: `reject` (409), `queue` (run it "
        "next; 202 at once) or `interrupt` (stop the running turn, keeping what it wrote). "
        "Default: the server's BUSY_POLICY."
    },
)


class MessageRequest(Schema):
    """A new message (the body of POST /api/chat/stream)."""

    message = fields.String(required=True, validate=MESSAGE)
    if_busy = IF_BUSY

    @staticmethod
    def ask(data: dict[str, Any]) -> Ask:
        """The engine's form of this request."""
        return Ask(
            text=data.get("message"),
            edit="parent_id" in data,
            parent_id=data.get("parent_id"),
            regenerate=data.get("regenerate"),
            if_busy=data.get("if_busy"),
        )


class TurnRequest(MessageRequest):
    """Body of POST /api/sessions/<id>/turns: a message (an edit: `parent_id`) or a regenerate."""

    message = fields.String(validate=MESSAGE)
    parent_id = fields.String(
        allow_none=True,
        validate=MESSAGE_ID,
        metadata={
            "description": "Edit: the parent of the message being replaced (null for the first "
            "message). The new message becomes its sibling and the active branch."
        },
    )
    regenerate = fields.String(
        validate=MESSAGE_ID,
        metadata={"description": "An answer's id: answer its question again, as a sibling."},
    )
    client_id = fields.String(
        validate=[validate.Length(min=1, max=100), validate.Regexp(NO_NUL), storable],
        metadata={
            "description": "Your id for this message, new for each one you send. Sending it "
            "again (after a 503 or a lost reply) returns the turn it started instead of asking "
            "twice; with another message it is 409 `client_id_reused`."
        },
    )

    @post_load
    def _one_of(self, data: dict[str, Any], **_: Any) -> dict[str, Any]:
        if ("message" in data) == ("regenerate" in data):
            raise ValidationError("Give either message or regenerate.", "message")
        if "regenerate" in data and "parent_id" in data:
            raise ValidationError("parent_id goes with a message, not a regenerate.", "parent_id")
        if "regenerate" in data and "client_id" in data:
            raise ValidationError("client_id goes with a message, not a regenerate.", "client_id")
        return data

    @staticmethod
    def ask(data: dict[str, Any]) -> Ask:
        """The engine's form of this request: a `client_id` names one send."""
        ask = MessageRequest.ask(data)
        return replace(ask, client_id=data.get("client_id"), once="client_id" in data)


class ActiveLeafRequest(Schema):
    """Body of PUT /api/sessions/<id>/active_leaf."""

    message_id = fields.String(required=True, validate=MESSAGE_ID)


class ApprovalRequest(Schema):
    """Body of POST /api/turns/<id>/approvals."""

    tool_use_id = fields.String(required=True, validate=[validate.Length(min=1, max=100)])
    approved = fields.Boolean(required=True)
    reason = fields.String(
        load_default=None, allow_none=True, validate=[validate.Length(max=500), storable]
    )
    always = fields.Boolean(
        load_default=False,
        metadata={
            "description": "With approved: the tool's later calls in this session need no "
            'approval ("always for this session").'
        },
    )


class ActionsQuery(Schema):
    """Query of GET /api/actions."""

    limit = fields.Integer(load_default=50, validate=validate.Range(min=1, max=200))


class ChatStreamRequest(MessageRequest):
    """Body of POST /api/chat/stream."""

    session_id = fields.String(
        load_default=None,
        validate=[validate.Length(min=1, max=64), validate.Regexp(NO_NUL), storable],
    )


class SessionRequest(Schema):
    """Body of POST /api/sessions (optional)."""

    title = fields.String(
        load_default=None,
        validate=[validate.Length(max=200), OneLine(blank=True), storable],
    )


class SessionRename(Schema):
    """Body of PATCH /api/sessions/<id>."""

    title = fields.String(
        required=True,
        validate=[
            validate.Length(min=1, max=200),
            OneLine(blank=False, error="The title must not be blank."),
            storable,
        ],
        metadata={"description": "The new title, 1 to 200 characters, not only whitespace."},
    )


def search_field() -> fields.String:
    """The `q` of GET /api/sessions: the characters to look for."""
    return fields.String(
        validate=[
            validate.Length(min=1, max=200),
            validate.Regexp(NON_BLANK, error="The search must not be blank (nor contain NUL)."),
            storable,
        ],
        metadata={
            "description": "Only sessions whose title or message text holds these characters "
            "(case-insensitive); each then has a `match`."
        },
    )


def events_field() -> fields.Boolean:
    """`events`: each message also carries the events that show it (streaming/wire/stored.py)."""
    return fields.Boolean(
        load_default=False,
        metadata={
            "description": "`true`: each message also carries `events`, the `[event, data]` "
            "pairs of the event protocol that show it, as its stream ended."
        },
    )


class SessionQuery(Schema):
    """Query of a session's detail: whether its messages carry their events."""

    events = events_field()


class ExportQuery(Schema):
    """Query of GET /api/sessions/<id>/export."""

    format = fields.String(
        load_default="md",
        validate=validate.OneOf(["md", "json"]),
        metadata={"description": "`md` (Markdown, the default) or `json`."},
    )


class EventsQuery(Schema):
    """Query of GET /api/turns/<id>/events."""

    last_event_id = fields.String(
        validate=validate.Regexp(EVENT_ID),
        metadata={"description": "Like the Last-Event-ID header (which wins if both are sent)."},
    )
    token = fields.String(metadata={"description": "The signed token of `events_url`."})


class EventsHeaders(Schema):
    """Headers of GET /api/turns/<id>/events."""

    last_event_id_header = fields.String(
        data_key="Last-Event-ID",
        validate=validate.Regexp(EVENT_ID),
        metadata={"description": "Send the events after this one (digits only, up to 18)."},
    )


def check_message_size(data: dict[str, Any]) -> dict[str, Any]:
    """Raise 413 for a message over MAX_MESSAGE_CHARS; return `data`."""
    limit = get_settings().max_message_chars
    if len(data.get("message") or "") > limit:
        raise ContentTooLarge(
            f"The message is over {limit} characters.",
            code="message_too_large",
            details={"message": [f"Longer than the limit of {limit} characters."]},
        )
    return data


TRIGGERS = ("submit-message", "regenerate-message")

CLIENT_ID_MAX = 100  # Message.client_id

# As an id in a path must be (routes/api.py): no slash, whitespace or control character.
CHAT_ID: list[Validator] = [
    validate.Length(min=1, max=128),
    validate.Regexp(rf"\A[^/{WS}\x00-\x1f\x7f-\x9f]+\Z"),
    storable,
]


class UIChatRequest(Schema):
    """The body DefaultChatTransport sends, plus `if_busy` (useChat's `body`); others ignored."""

    class Meta:
        unknown = EXCLUDE

    id = fields.String(required=True, validate=CHAT_ID)
    messages = fields.List(fields.Dict(), required=True, validate=validate.Length(min=1))
    trigger = fields.String(load_default="submit-message", validate=validate.OneOf(TRIGGERS))
    message_id = fields.String(data_key="messageId", load_default=None, allow_none=True)
    if_busy = IF_BUSY

    @post_load
    def _what_it_asks(self, data: dict[str, Any], **_: Any) -> dict[str, Any]:
        """Classify the request: a (possibly edited) message, a regenerate, or decisions."""
        newest = data["messages"][-1]
        if data["trigger"] == "regenerate-message":
            target = data["message_id"] or newest.get("id")
            if not isinstance(target, str) or not target:
                raise ValidationError({"messageId": ["Name the message to regenerate."]})
            data.update(kind="regenerate", target=target)
            return data
        if newest.get("role") == "assistant":
            data.update(kind="approvals", approvals=_approvals(newest))
            data["assistant_id"] = newest.get("id")
            return data
        data.update(kind="message", message=_user_text(newest), client_id=_client_id(newest))
        return data


def _user_text(newest: dict[str, Any]) -> str:
    """The newest message's text: it must be the user's, with text parts only."""
    parts = newest.get("parts")
    if newest.get("role") != "user" or not isinstance(parts, list):
        raise ValidationError(
            {"messages": ["The newest message must be a user message (or approval responses)."]}
        )
    if not all(isinstance(p, dict) and p.get("type") == "text" for p in parts):
        raise ValidationError({"messages": ["Only text parts are supported."]})
    texts = [p.get("text") for p in parts]
    if not all(isinstance(t, str) for t in texts):
        raise ValidationError({"messages": ["A text part's text must be a string."]})
    text = "\n".join(texts)
    try:
        storable(text)
    except ValidationError as err:
        raise ValidationError({"messages": err.messages}) from err
    if not text.strip():
        raise ValidationError({"messages": ["The message must not be empty."]})
    return text


def _client_id(newest: dict[str, Any]) -> str | None:
    """The id useChat gave the user message (kept with it, so an edit can name it)."""
    ui_id = newest.get("id")
    if ui_id is None:
        return None
    try:
        if not isinstance(ui_id, str) or not 1 <= len(ui_id) <= CLIENT_ID_MAX:
            raise ValidationError(f"A message id is a string of 1 to {CLIENT_ID_MAX} characters.")
        storable(ui_id)
    except ValidationError as err:
        raise ValidationError({"messages": err.messages}) from err
    return ui_id


def _approvals(newest: dict[str, Any]) -> list[dict[str, Any]]:
    """The `approval-responded` tool parts of an assistant message (the approval follow-up)."""
    found: list[dict[str, Any]] = []
    parts = newest.get("parts")
    for part in parts if isinstance(parts, list) else []:
        if not isinstance(part, dict) or part.get("state") != "approval-responded":
            continue
        approval = part.get("approval")
        if not isinstance(approval, dict):
            raise ValidationError({"messages": ["An approval-responded part needs `approval`."]})
        try:
            found.append(ApprovalResponse().load(approval, unknown=EXCLUDE))
        except ValidationError as err:
            raise ValidationError({"messages": err.messages}) from err
    if not found or not isinstance(newest.get("id"), str):
        raise ValidationError(
            {"messages": ["An assistant message is sent only with approval responses."]}
        )
    return found


class ApprovalResponse(Schema):
    """A tool part's `approval` after addToolApprovalResponse."""

    id = fields.String(required=True, validate=validate.Length(min=1, max=100))
    approved = fields.Boolean(required=True, truthy={True}, falsy={False})
    reason = fields.String(
        load_default=None, allow_none=True, validate=[validate.Length(max=500), storable]
    )


class ResumeHeaders(Schema):
    """Headers of a resume that names the client's message and step count."""

    message_id = fields.String(data_key=ui_chats.RESUME_MESSAGE_HEADER)
    steps = fields.String(
        data_key=ui_chats.RESUME_STEPS_HEADER,
        validate=validate.Regexp(r"\A[0-9]{1,9}\Z"),
        metadata={"description": "The client's count of step-start parts."},
    )

"""Marshmallow schemas of requests: bodies, query strings and headers (routes/api.py parses)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from marshmallow import (
    Schema,
    ValidationError,
    fields,
    post_load,
    validate,
    validates,
    validates_schema,
)
from marshmallow.types import Validator
from werkzeug.datastructures import Headers

from domain.errors import ContentTooLarge
from domain.text import NOT_PLAIN, SPACES
from engine.store.starts import Ask
from routes.extensions import get_settings
from streaming.wire.events import BUSY_POLICIES
from tools.finance.inputs import TransactionsInput

# An event id: digits only, at most 18 of them (any such number fits in 64 bits).
EVENT_ID = r"\A[0-9]{1,18}\Z"
# Whitespace as JSON Schema's (ECMA-262) \s means it, spelled out: Python's \s differs.
WS = r"\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
# Some character that is not whitespace, and no NUL anywhere.
NON_BLANK = rf"\A[{WS}]*[^{WS}\x00][^\x00]*\Z"
NO_NUL = r"\A[^\x00]*\Z"


def storable(value: str) -> None:
    """Reject text no database can store: NUL characters and lone UTF-16 surrogates."""
    if "\x00" in value:
        raise ValidationError("Must not contain NUL characters.")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as err:
        raise ValidationError("Must be valid Unicode (no lone surrogates).") from err


def unstorable_fields(
    data: Mapping[str, Any] | Headers, names: Iterable[str]
) -> dict[str, list[str]]:
    """The fields of `data` among `names` holding text no database can store anywhere inside
    them (strings, list items, object keys and values), each with the reason and where."""
    problems = {}
    for name in names:
        if name in data and (problem := _first_unstorable(name, data[name])):
            problems[name] = [problem]
    return problems


def _first_unstorable(name: str, value: Any) -> str | None:
    """Why some text in the field `name` cannot be stored, and where; None if all of it can."""
    # A stack, not recursion: a body may nest as deep as the JSON parser allows.
    stack: list[tuple[str, Any]] = [(name, value)]
    while stack:
        where, value = stack.pop()
        texts: list[Any] = [value]
        children: list[tuple[str, Any]] = []
        if isinstance(value, dict):
            # Keys are checked before their values: a path in the answer holds no bad text.
            texts = list(value)
            children = [(f"{where}.{key}", item) for key, item in value.items()]
        elif isinstance(value, list):
            children = [(f"{where}[{i}]", item) for i, item in enumerate(value)]
        for text in texts:
            try:
                if isinstance(text, str):
                    storable(text)
            except ValidationError as err:
                return f"{err.messages[0]}" + ("" if where == name else f" (in {where})")
        stack += children
    return None


class OneLine(validate.Regexp):
    """A title or a name: one line of plain text, not blank unless `blank`. A Regexp, so the
    OpenAPI document carries its pattern; its error names the character refused."""

    def __init__(self, *, blank: bool, error: str = "Must not be blank.") -> None:
        some = rf"[{SPACES}]*[^{WS}{NOT_PLAIN}]" if not blank else ""
        super().__init__(rf"\A{some}[^{NOT_PLAIN}]*\Z", error=error)

    def __call__(self, value: str) -> str:  # type: ignore[override]  # String fields pass str only
        if found := re.search(f"[{NOT_PLAIN}]", value):
            raise ValidationError(
                f"Must be one line of plain text: U+{ord(found.group()):04X} is a control, "
                "line-separator or bidi formatting character."
            )
        return super().__call__(value)


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


class CredentialRequest(Schema):
    """Body of PUT /api/mcp/<server>/credentials."""

    value = fields.String(
        required=True,
        # One line, no control character: a newline pasted with it would break the header
        # it fills (422, and the value is never logged or echoed).
        validate=[validate.Length(min=1, max=4096), OneLine(blank=False), storable],
        metadata={"description": "The secret; it fills `{credential}` in the server's headers."},
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


class TransactionsQuery(TransactionsInput):
    """Query of GET /api/transactions: get_transactions' filters, sort and page, in a URL."""

    pending = fields.Boolean(
        truthy={"true"},
        falsy={"false"},
        metadata={"description": "`true`: only pending; `false`: only posted; omit for both."},
    )
    imported = fields.Boolean(
        truthy={"true"},
        falsy={"false"},
        metadata={"description": "`true`: only imported rows; `false`: only the others."},
    )
    limit = fields.Integer(
        load_default=50,
        validate=validate.Range(min=1, max=100),
        metadata={"description": "Rows per page, 1 to 100."},
    )

    @validates_schema
    def _storable(self, data: dict[str, Any], **_: Any) -> None:
        # A NUL reaches no database: PostgreSQL refuses it in any string it compares.
        for name in ("category", "merchant", "account", "cursor"):
            if isinstance(data.get(name), str):
                try:
                    storable(data[name])
                except ValidationError as err:
                    raise ValidationError(err.messages, name) from err


MAX_TOKEN_LIFETIME = timedelta(days=3650)


class TokenRequest(Schema):
    """Body of POST /api/tokens: a name and, optionally, when the token expires."""

    name = fields.String(
        required=True, validate=[validate.Length(min=1, max=100), OneLine(blank=True), storable]
    )
    expires_in = fields.Integer(
        strict=True, validate=validate.Range(min=60, max=int(MAX_TOKEN_LIFETIME.total_seconds()))
    )
    expires_at = fields.AwareDateTime()

    @validates("name")
    def _named(self, value: str, **_: Any) -> None:
        if not value.strip():
            raise ValidationError("The name must not be empty.")

    @validates("expires_at")
    def _future(self, value: datetime, **_: Any) -> None:
        now = datetime.now(UTC)
        if value <= now:
            raise ValidationError("Must be in the future.")
        if value > now + MAX_TOKEN_LIFETIME:
            raise ValidationError("Must be within ten years.")

    @post_load
    def _expiry(self, data: dict[str, Any], **_: Any) -> dict[str, Any]:
        if "expires_in" in data and "expires_at" in data:
            raise ValidationError("Give expires_in or expires_at, not both.", "_schema")
        seconds = data.pop("expires_in", None)
        if seconds is not None:
            data["expires_at"] = datetime.now(UTC) + timedelta(seconds=seconds)
        elif data.get("expires_at") is not None:
            data["expires_at"] = data["expires_at"].astimezone(UTC)
        data.setdefault("expires_at", None)
        data["name"] = data["name"].strip()
        return data


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

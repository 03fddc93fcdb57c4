"""The Vercel AI SDK's chat endpoints (useChat / DefaultChatTransport) over our turns."""

from __future__ import annotations

from typing import Any

from flask import Response, g
from marshmallow import EXCLUDE, Schema, ValidationError, fields, post_load, validate
from marshmallow.types import Validator

from domain.errors import Conflict, NotFound
from routes.api import BEARER, Blueprint
from routes.auth import login_required
from routes.event_streams import stream_response
from routes.extensions import get_db, get_session_limits, get_token_guard, get_turns
from routes.requests import IF_BUSY, WS, check_message_size, storable
from routes.responses import TURN_HEADERS, UI_SSE, UICancelAccepted, UIChatMessages
from services import sessions, ui_asks, ui_chats
from streaming.aisdk.ui_stream import UI_STREAM_HEADERS
from streaming.shapes import UIChunks
from telemetry import access

bp = Blueprint("ui_chat", __name__, description="The Vercel AI SDK's useChat endpoints.")
UI_DOC = "The turn as the AI SDK's UI message stream (SSE `data:` chunks, then `[DONE]`)."

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


@bp.post("/ui/chat")
@login_required
@bp.arguments(UIChatRequest)
@bp.alt_response(
    200, success=True, content_type="text/event-stream", description=UI_DOC, headers=TURN_HEADERS
)
@bp.doc(security=BEARER, responses={200: {"content": UI_SSE}})
def chat(body: dict[str, Any]) -> Response:
    """Start the turn the request asks for (message, edit, regenerate, approvals); stream it."""
    check_message_size(body)
    session_id = ui_chats.chat_session(get_db(), g.user_id, body["id"])
    ask = ui_asks.plan(get_db(), session_id, body)
    decided = isinstance(ask, ui_asks.FollowUp)
    if isinstance(ask, ui_asks.FollowUp):
        turn_id, message_id = decide(ask), ask.message_id  # decisions ask the limits
    else:
        get_turns().admit(g.user_id)  # before the chat's row is made: a refusal writes nothing
        session_id = session_id or ui_chats.chat_session(
            get_db(), g.user_id, body["id"], True, get_session_limits()
        )
        turn_id = get_turns().start(g.user_id, session_id, ask).turn_id
        message_id = None
    # The follow-up's client holds its decisions: they are not sent back (ai 6 cannot read them).
    response = ui_stream(turn_id, None, message_id, decided)
    response.headers["X-Turn-Id"], response.headers["X-Session-Id"] = turn_id, session_id or ""
    return response


@bp.get("/ui/chat/<chat_id>/stream")
@login_required
@bp.arguments(ResumeHeaders, location="headers", as_kwargs=True)
@bp.alt_response(200, success=True, content_type="text/event-stream", description=UI_DOC)
@bp.alt_response(204, description="Nothing to resume.")
@bp.doc(security=BEARER, responses={200: {"content": UI_SSE}})
def resume(chat_id: str, message_id: str | None = None, steps: str | None = None) -> Response:
    """Resume the chat's turn: after the client's step if it names one, else from the start."""
    session_id = ui_chats.chat_session(get_db(), g.user_id, chat_id)
    latest = ui_chats.latest_turn(get_db(), session_id) if session_id else None
    if latest is None:
        return Response(status=204)
    turn_id, status = latest
    # A continuation streams into its chain's first message, after the steps made before it.
    first, before = ui_chats.resume_point(get_db(), session_id or "", turn_id)
    if message_id == first and steps is not None:
        # Served finished or not: re-sending the client's step is harmless, missing it is not.
        return ui_stream(turn_id, max(0, int(steps) - before), first)
    if status == "running":
        return ui_stream(turn_id, 0 if before else None, first)
    return Response(status=204)


@bp.get("/ui/chat/<chat_id>/messages")
@login_required
@bp.alt_response(200, schema=UIChatMessages, success=True, description="The conversation.")
@bp.doc(security=BEARER)
def messages(chat_id: str) -> dict[str, Any]:
    """Return the chat's stored conversation as UIMessages, and how to resume what runs."""
    return ui_chats.chat_messages(get_db(), g.user_id, chat_id)


@bp.post("/ui/chat/<chat_id>/cancel")
@login_required
@bp.alt_response(202, schema=UICancelAccepted, success=True, description="Cancel requested.")
@bp.doc(security=BEARER)
def cancel(chat_id: str) -> tuple[dict[str, Any], int]:
    """Ask the chat's running turn to stop (useChat's stop() only closes the connection)."""
    session_id = ui_chats.chat_session(get_db(), g.user_id, chat_id)
    if session_id is None:
        raise NotFound("chat")
    running = sessions.running_turn(get_db(), g.user_id, session_id)
    if running is not None:
        get_turns().cancel(running)
    return {"turn_id": running, "cancel_requested": running is not None}, 202


def decide(follow_up: ui_asks.FollowUp) -> str:
    """Record the follow-up's decisions (the same again changes nothing); return the turn
    that goes on with them."""
    decision = None
    for d in follow_up.decisions:
        decision = get_turns().decide(g.user_id, d.turn_id, d.tool_use_id, d.approved, d.reason)
    if decision is None or decision.continuation is None:
        raise Conflict(
            "A newer message declined these actions; reload the conversation.",
            code="already_answered",
        )
    return decision.continuation


def ui_stream(
    turn_id: str, steps: int | None, message_id: str | None = None, decided: bool = False
) -> Response:
    """Stream the turn as UI message chunks (into UIMessage `message_id`, default its own),
    from the start or after the client's `steps`; `decided`: the client sent its approvals."""
    guard = get_token_guard(g.get("token_id"))
    shape = UIChunks(steps, message_id, decided)
    body = get_turns().follow(turn_id, 0, shape, guard, access.streamed())
    return stream_response(body, UI_STREAM_HEADERS)

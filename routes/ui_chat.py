"""The Vercel AI SDK's chat endpoints (useChat / DefaultChatTransport) over our turns."""

from __future__ import annotations

from typing import Any

from flask import Response, g
from marshmallow import EXCLUDE, Schema, ValidationError, fields, post_load, validate, validates

from routes.api import BEARER, Blueprint
from routes.auth import login_required
from routes.deps import get_db, get_token_guard, get_turns
from routes.errors import APIError
from routes.responses import TURN_HEADERS, UI_SSE, UICancelAccepted, UIChatMessages
from routes.schemas import WS, check_message_size, storable
from routes.sse import stream_response
from services import sessions, ui_chats
from streaming.shapes import UIChunks
from streaming.ui_stream import UI_STREAM_HEADERS
from telemetry import access

bp = Blueprint("ui_chat", __name__, description="The Vercel AI SDK's useChat endpoints.")
UI_DOC = "The turn as the AI SDK's UI message stream (SSE `data:` chunks, then `[DONE]`)."

CHAT_ID = [validate.Length(min=1, max=128), validate.Regexp(rf"\A[^/{WS}\x00]+\Z"), storable]


class UIChatRequest(Schema):
    """The body DefaultChatTransport sends; extra `body` fields of the client are ignored."""

    class Meta:
        unknown = EXCLUDE

    id = fields.String(required=True, validate=CHAT_ID)
    messages = fields.List(fields.Dict(), required=True, validate=validate.Length(min=1))
    trigger = fields.String(load_default="submit-message")
    message_id = fields.String(data_key="messageId", load_default=None, allow_none=True)

    @validates("trigger")
    def _submit_only(self, value: str, **_: Any) -> None:
        if value != "submit-message":
            raise ValidationError(
                "Only 'submit-message' is supported: the server keeps the one history, "
                "so send a new message instead of regenerating."
            )

    @post_load
    def _newest_user_text(self, data: dict[str, Any], **_: Any) -> dict[str, Any]:
        """Keep only the newest message, which must be the user's text."""
        newest = data["messages"][-1]
        parts = newest.get("parts")
        if newest.get("role") != "user" or not isinstance(parts, list):
            raise ValidationError({"messages": ["The newest message must be a user message."]})
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
        data["message"] = text
        return data


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
    """Start a turn on the chat's session with the newest user message; stream it."""
    check_message_size(body)
    get_turns().admit(g.user_id)  # before the chat's row is made: a refusal writes nothing
    session_id = ui_chats.chat_session(get_db(), g.user_id, body["id"], create=True)
    turn = get_turns().start(g.user_id, session_id, body["message"])
    response = ui_stream(turn.turn_id, None)
    response.headers["X-Turn-Id"], response.headers["X-Session-Id"] = turn.turn_id, session_id
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
    if message_id == turn_id and steps is not None:
        # Served finished or not: re-sending the client's step is harmless, missing it is not.
        return ui_stream(turn_id, int(steps))
    if status == "running":
        return ui_stream(turn_id, None)
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
        raise APIError(404, "not_found", "No such chat.")
    running = sessions.running_turn(get_db(), g.user_id, session_id)
    if running is not None:
        get_turns().cancel(running)
    return {"turn_id": running, "cancel_requested": running is not None}, 202


def ui_stream(turn_id: str, steps: int | None) -> Response:
    """Stream the turn as UI message chunks, from the start or after the client's `steps`."""
    guard = get_token_guard(g.get("token_id"))
    body = get_turns().follow(turn_id, 0, UIChunks(steps), guard, access.streamed())
    return stream_response(body, UI_STREAM_HEADERS)

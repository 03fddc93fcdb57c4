"""The Vercel AI SDK's chat endpoints (useChat / DefaultChatTransport) over our turns."""

from __future__ import annotations

from typing import Any

from flask import Response, g

from domain.errors import Conflict, NotFound
from routes.api import BEARER, Blueprint
from routes.auth import login_required
from routes.chat.events import stream_response
from routes.chat.requests import ResumeHeaders, UIChatRequest, check_message_size
from routes.chat.responses import TURN_HEADERS, UI_SSE, UICancelAccepted, UIChatMessages
from routes.extensions import get_db, get_session_limits, get_token_guard, get_turns
from services import sessions, ui_asks, ui_chats
from streaming.aisdk.ui_stream import UI_STREAM_HEADERS
from streaming.shapes import UIChunks
from telemetry import access

bp = Blueprint("ui_chat", __name__, description="The Vercel AI SDK's useChat endpoints.")

UI_DOC = "The turn as the AI SDK's UI message stream (SSE `data:` chunks, then `[DONE]`)."


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

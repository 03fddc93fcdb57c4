"""One-request chat: post a message, get the reply as text/event-stream."""

from __future__ import annotations

from typing import Any

from flask import Response, g

from routes.api import BEARER, Blueprint
from routes.auth import login_required
from routes.chat.events import EVENTS_DOC, event_stream
from routes.chat.requests import ChatStreamRequest, check_message_size
from routes.chat.responses import SSE, TURN_HEADERS
from routes.extensions import get_turns

bp = Blueprint("chat", __name__, description="A whole turn in one request.")


@bp.post("/chat/stream")
@login_required
@bp.arguments(ChatStreamRequest)
@bp.alt_response(
    200,
    success=True,
    content_type="text/event-stream",
    description=EVENTS_DOC,
    headers=TURN_HEADERS,
)
@bp.doc(security=BEARER, responses={200: {"content": SSE}})
def stream(body: dict[str, Any]) -> Response:
    """Start a turn (creating the session if none is given) and stream its events."""
    check_message_size(body)
    turn = get_turns().start(g.user_id, body["session_id"], ChatStreamRequest.ask(body))
    response = event_stream(turn.turn_id, 0, started=True)
    response.headers["X-Turn-Id"], response.headers["X-Session-Id"] = turn.turn_id, turn.session_id
    return response

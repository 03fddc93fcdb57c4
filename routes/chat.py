"""One-request chat: post a message, get the reply as text/event-stream."""

from __future__ import annotations

from flask import Blueprint, Response, g

from routes.auth import login_required
from routes.deps import get_turns
from routes.ratelimit import rate_limited
from routes.schemas import ChatStreamRequest, parse_body
from routes.sse import event_stream

bp = Blueprint("chat", __name__)


@bp.post("/chat/stream")
@login_required
@rate_limited
def stream() -> Response:
    """Start a turn (creating the session if none is given) and stream its events."""
    body = parse_body(ChatStreamRequest())
    turn = get_turns().start(g.user_id, body["session_id"], body["message"])
    response = event_stream(get_turns(), turn.turn_id, 0)
    response.headers["X-Turn-Id"], response.headers["X-Session-Id"] = turn.turn_id, turn.session_id
    return response

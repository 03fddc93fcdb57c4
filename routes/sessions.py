"""Chat sessions: create, list, show with messages, delete."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, g

from routes.auth import login_required
from routes.deps import get_db, get_prices, get_turns
from routes.schemas import SessionRequest, parse_body
from services import sessions

bp = Blueprint("sessions", __name__)


@bp.post("/sessions")
@login_required
def create() -> tuple[dict[str, Any], int]:
    """Create a session."""
    body = parse_body(SessionRequest(), optional=True)
    return sessions.create_session(get_db(), g.user_id, body["title"]), 201


@bp.get("/sessions")
@login_required
def index() -> dict[str, Any]:
    """List the caller's sessions."""
    return {"sessions": sessions.list_sessions(get_db(), g.user_id)}


@bp.get("/sessions/<session_id>")
@login_required
def show(session_id: str) -> dict[str, Any]:
    """Show a session with its messages, usage and cost."""
    return sessions.get_session(get_db(), g.user_id, session_id, get_prices())


@bp.delete("/sessions/<session_id>")
@login_required
def destroy(session_id: str) -> tuple[str, int]:
    """Delete a session, first stopping a turn that runs on it."""
    running = sessions.running_turn(get_db(), g.user_id, session_id)
    if running is not None:
        get_turns().cancel(running)
        get_turns().wait(running, timeout=5)
    sessions.delete_session(get_db(), g.user_id, session_id)
    return "", 204

"""Turns: start one, read its status, follow its events, cancel it."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, g, url_for

from routes.auth import events_auth, login_required, sign_events_token
from routes.deps import get_db, get_prices, get_turns
from routes.ratelimit import rate_limited
from routes.schemas import TurnRequest, parse_body
from routes.sse import event_stream, last_event_id
from services import sessions

bp = Blueprint("turns", __name__)


@bp.post("/sessions/<session_id>/turns")
@login_required
@rate_limited
def create(session_id: str) -> tuple[dict[str, Any], int]:
    """Start a turn; its events stream from `events_url`."""
    body = parse_body(TurnRequest())
    turn = get_turns().start(g.user_id, session_id, body["message"])
    g.turn_id = turn.turn_id  # for the access log
    return {
        "turn_id": turn.turn_id,
        "session_id": turn.session_id,
        "user_message_id": turn.user_message_id,
        "events_url": events_url(turn.turn_id),
    }, 202


@bp.get("/turns/<turn_id>")
@login_required
def show(turn_id: str) -> dict[str, Any]:
    """Return a turn's status, usage and cost, and a fresh `events_url` (signed ones expire)."""
    turn = sessions.get_turn(get_db(), g.user_id, turn_id, get_prices())
    return {**turn, "events_url": events_url(turn_id)}


@bp.get("/turns/<turn_id>/events")
@events_auth
def events(turn_id: str) -> Response:
    """Replay the turn's events after Last-Event-ID, then follow live."""
    after = last_event_id()
    sessions.get_turn(get_db(), g.user_id, turn_id)
    return event_stream(get_turns(), turn_id, after)


@bp.post("/turns/<turn_id>/cancel")
@login_required
def cancel(turn_id: str) -> tuple[dict[str, Any], int]:
    """Ask a running turn to stop; what it produced so far is kept."""
    turn = sessions.get_turn(get_db(), g.user_id, turn_id)
    get_turns().cancel(turn_id)
    return {"turn_id": turn_id, "status": turn["status"], "cancel_requested": True}, 202


def events_url(turn_id: str) -> str:
    """Return the events URL with a signed token an EventSource can use."""
    return url_for("turns.events", turn_id=turn_id, token=sign_events_token(g.user_id, turn_id))

"""Turns: start one, read its status, follow its events, cancel it."""

from __future__ import annotations

from typing import Any

from flask import Response, g, url_for

from routes.api import BEARER, Blueprint
from routes.auth import events_auth, login_required, sign_events_token
from routes.chat.events import EVENTS_DOC, event_stream
from routes.chat.requests import (
    ActionsQuery,
    ApprovalRequest,
    EventsHeaders,
    EventsQuery,
    TurnRequest,
    check_message_size,
)
from routes.chat.responses import (
    NEW_TURN_LINKS,
    SSE,
    ActionList,
    ApprovalDecided,
    ApprovalList,
    CancelAccepted,
    Turn,
    TurnStarted,
)
from routes.extensions import get_db, get_prices, get_turns
from routes.responses import ErrorResponse
from services import sessions

bp = Blueprint("turns", __name__, description="Turns and their event streams.")


@bp.post("/sessions/<session_id>/turns")
@login_required
@bp.arguments(TurnRequest)
@bp.alt_response(202, schema=TurnStarted, success=True, description="Started.")
@bp.doc(security=BEARER, responses={202: {"links": NEW_TURN_LINKS}})
def create(body: dict[str, Any], session_id: str) -> tuple[dict[str, Any], int]:
    """Start a turn (or queue it behind the running one); its events stream from `events_url`."""
    check_message_size(body)
    turn = get_turns().start(g.user_id, session_id, TurnRequest.ask(body))
    g.turn_id = turn.turn_id  # for the access log
    return {
        "turn_id": turn.turn_id,
        "session_id": turn.session_id,
        "user_message_id": turn.user_message_id,
        "status": "queued" if turn.queued else "running",
        "interrupted_turn_id": turn.interrupted,
        "events_url": events_url(turn.turn_id),
    }, 202


@bp.get("/turns/<turn_id>")
@login_required
@bp.alt_response(200, schema=Turn, success=True, description="The turn.")
@bp.doc(security=BEARER)
def show(turn_id: str) -> dict[str, Any]:
    """Return a turn's status, usage and cost, and a fresh `events_url` (signed ones expire)."""
    turn = sessions.get_turn(get_db(), g.user_id, turn_id, get_prices())
    return {**turn, "events_url": events_url(turn_id)}


@bp.get("/turns/<turn_id>/events")
@events_auth
@bp.arguments(EventsQuery, location="query", as_kwargs=True)
@bp.arguments(EventsHeaders, location="headers", as_kwargs=True)
@bp.alt_response(200, success=True, content_type="text/event-stream", description=EVENTS_DOC)
@bp.alt_response(204, description="The turn ended and nothing is left after Last-Event-ID.")
@bp.alt_response(416, schema=ErrorResponse, description="Last-Event-ID is past the last event.")
@bp.doc(security=[*BEARER, {}], responses={200: {"content": SSE}})
def events(
    turn_id: str,
    last_event_id_header: str | None = None,
    last_event_id: str | None = None,
    token: str | None = None,
) -> Response:
    """Replay the turn's events after Last-Event-ID, then follow live."""
    after = int(last_event_id_header or last_event_id or 0)
    sessions.get_turn(get_db(), g.user_id, turn_id)
    return event_stream(turn_id, after)


@bp.post("/turns/<turn_id>/approvals")
@login_required
@bp.arguments(ApprovalRequest)
@bp.alt_response(200, schema=ApprovalDecided, success=True, description="Decided.")
@bp.alt_response(409, schema=ErrorResponse, description="Decided the other way already.")
@bp.alt_response(429, schema=ErrorResponse, description="Over the day's tokens or the rate.")
@bp.doc(security=BEARER)
def decide(body: dict[str, Any], turn_id: str) -> dict[str, Any]:
    """Approve or decline an action the turn asked for; the answer goes on once all are decided."""
    decision = get_turns().decide(
        g.user_id, turn_id, body["tool_use_id"], body["approved"], body["reason"], body["always"]
    )
    following = decision.continuation
    return {
        **decision.run,
        "continuation_turn_id": following,
        "events_url": events_url(following) if following else None,
    }


@bp.get("/turns/<turn_id>/approvals")
@login_required
@bp.alt_response(200, schema=ApprovalList, success=True, description="Oldest first.")
@bp.doc(security=BEARER)
def approvals(turn_id: str) -> dict[str, Any]:
    """The actions a turn asked the user to approve, and how each was decided."""
    return {"approvals": get_turns().approvals.of_turn(g.user_id, turn_id)}


@bp.get("/actions")
@login_required
@bp.arguments(ActionsQuery, location="query", as_kwargs=True)
@bp.alt_response(200, schema=ActionList, success=True, description="Newest first.")
@bp.doc(security=BEARER)
def actions(limit: int) -> dict[str, Any]:
    """The changes the assistant made to the user's data, each with who approved it and when."""
    return {"actions": get_turns().approvals.actions(g.user_id, limit)}


@bp.post("/turns/<turn_id>/cancel")
@login_required
@bp.alt_response(202, schema=CancelAccepted, success=True, description="Cancel requested.")
@bp.doc(security=BEARER)
def cancel(turn_id: str) -> tuple[dict[str, Any], int]:
    """Ask a running turn to stop; what it produced so far is kept."""
    turn = sessions.get_turn(get_db(), g.user_id, turn_id)
    get_turns().cancel(turn_id)
    return {"turn_id": turn_id, "status": turn["status"], "cancel_requested": True}, 202


def events_url(turn_id: str) -> str:
    """Return the events URL with a signed token an EventSource can use."""
    return url_for("turns.events", turn_id=turn_id, token=sign_events_token(g.user_id, turn_id))

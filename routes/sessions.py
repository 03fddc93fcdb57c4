"""Chat sessions: create, list or search, show, rename, export, page messages, delete."""

from __future__ import annotations

from typing import Any

from flask import Response, g

from routes.api import BEARER, Blueprint
from routes.auth import login_required
from routes.deps import get_db, get_prices, get_turns
from routes.paging import MessagePageQuery, SessionPageQuery, session_cursor, session_key
from routes.responses import (
    NEW_SESSION_LINKS,
    ErrorResponse,
    MessagePage,
    Session,
    SessionDetail,
    SessionPage,
)
from routes.schemas import ActiveLeafRequest, ExportQuery, SessionRename, SessionRequest
from services import export, search, sessions

bp = Blueprint("sessions", __name__, description="Chat sessions.")


@bp.post("/sessions")
@login_required
@bp.arguments(SessionRequest, description="Optional: an empty body is a session with no title.")
@bp.alt_response(201, schema=Session, success=True, description="The new session.")
@bp.doc(security=BEARER, responses={201: {"links": NEW_SESSION_LINKS}})
def create(body: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """Create a session."""
    return sessions.create_session(get_db(), g.user_id, body["title"]), 201


@bp.get("/sessions")
@login_required
@bp.arguments(SessionPageQuery, location="query", as_kwargs=True)
@bp.alt_response(200, schema=SessionPage, success=True, description="Newest first.")
@bp.doc(security=BEARER)
def index(limit: int, cursor: str | None = None, q: str | None = None) -> dict[str, Any]:
    """List the caller's sessions, newest first, a page at a time; with `q`, those matching."""
    after = session_key(cursor) if cursor else None
    if q is not None:
        rows, key = search.search_sessions(get_db(), g.user_id, q, limit, after)
    else:
        rows, key = sessions.list_sessions(get_db(), g.user_id, limit, after)
    return {"sessions": rows, "next_cursor": key and session_cursor(key)}


@bp.get("/sessions/<session_id>")
@login_required
@bp.alt_response(200, schema=SessionDetail, success=True, description="The session.")
@bp.doc(security=BEARER)
def show(session_id: str) -> dict[str, Any]:
    """Show a session with all its messages, usage and cost."""
    return sessions.get_session(get_db(), g.user_id, session_id, get_prices())


@bp.patch("/sessions/<session_id>")
@login_required
@bp.arguments(SessionRename)
@bp.alt_response(200, schema=Session, success=True, description="The renamed session.")
@bp.doc(security=BEARER)
def rename(body: dict[str, Any], session_id: str) -> dict[str, Any]:
    """Rename a session."""
    return sessions.rename_session(get_db(), g.user_id, session_id, body["title"])


@bp.get("/sessions/<session_id>/export")
@login_required
@bp.arguments(ExportQuery, location="query", as_kwargs=True)
@bp.alt_response(200, success=True, description="A download: the chat as Markdown or JSON.")
@bp.doc(
    security=BEARER,
    responses={
        200: {
            "content": {
                "text/markdown": {"schema": {"type": "string"}},
                "application/json": {"schema": {"type": "object"}},
            },
            "headers": {"Content-Disposition": {"schema": {"type": "string"}}},
        }
    },
)
def export_chat(session_id: str, format: str) -> Response:
    """Download a session (its messages as stored) as Markdown or JSON."""
    session = sessions.get_session(get_db(), g.user_id, session_id, get_prices())
    body = export.export_markdown(session) if format == "md" else export.export_json(session)
    name = export.filename(session, format)
    return Response(
        body,
        content_type=export.FORMATS[format],
        headers={
            "Content-Disposition": f'attachment; filename="{name}"',
            "Cache-Control": "no-store",
        },
    )


@bp.get("/sessions/<session_id>/messages")
@login_required
@bp.arguments(MessagePageQuery, location="query", as_kwargs=True)
@bp.alt_response(200, schema=MessagePage, success=True, description="Oldest first.")
@bp.doc(security=BEARER)
def messages(session_id: str, limit: int, cursor: str | None = None) -> dict[str, Any]:
    """List a session's messages, oldest first, a page at a time."""
    after = int(cursor) if cursor else None
    rows, key = sessions.list_messages(get_db(), g.user_id, session_id, limit, after)
    return {"messages": rows, "next_cursor": None if key is None else str(key)}


@bp.put("/sessions/<session_id>/active_leaf")
@login_required
@bp.arguments(ActiveLeafRequest)
@bp.alt_response(200, schema=SessionDetail, success=True, description="The session, switched.")
@bp.alt_response(409, schema=ErrorResponse, description="A turn is running on the session.")
@bp.doc(security=BEARER)
def switch(body: dict[str, Any], session_id: str) -> dict[str, Any]:
    """Show another branch: the one through `message_id` (to its newest end)."""
    sessions.switch_branch(get_db(), g.user_id, session_id, body["message_id"])
    return sessions.get_session(get_db(), g.user_id, session_id, get_prices())


@bp.delete("/sessions/<session_id>")
@login_required
@bp.alt_response(204, description="Deleted.", success=True)
@bp.doc(security=BEARER)
def destroy(session_id: str) -> tuple[str, int]:
    """Delete a session, first stopping a turn that runs on it."""
    running = sessions.running_turn(get_db(), g.user_id, session_id)
    if running is not None:
        turns = get_turns()
        turns.cancel(running)
        turns.wait(running, timeout=turns.timings.stale_after)  # a few heartbeats at most
    sessions.delete_session(get_db(), g.user_id, session_id)
    return "", 204

"""Chat sessions: create, list or search, show, rename, export, page messages, delete."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from flask import Response, g, request

from routes.api import BEARER, Blueprint
from routes.auth import login_required
from routes.chat.paging import MessagePageQuery, SessionPageQuery, session_cursor, session_key
from routes.chat.requests import (
    ActiveLeafRequest,
    ExportQuery,
    SessionQuery,
    SessionRename,
    SessionRequest,
)
from routes.chat.responses import (
    NEW_SESSION_LINKS,
    MessagePage,
    Session,
    SessionDetail,
    SessionPage,
)
from routes.extensions import (
    get_db,
    get_engine,
    get_prices,
    get_search_gate,
    get_session_limits,
    get_settings,
    get_turns,
)
from routes.responses import ErrorResponse
from services import export, search, sessions
from streaming.hosting import STREAM_HOOK, BodyFactory

bp = Blueprint("sessions", __name__, description="Chat sessions.")


@bp.post("/sessions")
@login_required
@bp.arguments(SessionRequest, description="Optional: an empty body is a session with no title.")
@bp.alt_response(201, schema=Session, success=True, description="The new session.")
@bp.alt_response(409, schema=ErrorResponse, description="`too_many_sessions`: USER_MAX_SESSIONS.")
@bp.alt_response(429, schema=ErrorResponse, description="`rate_limited`: SESSION_RATE_LIMIT.")
@bp.doc(security=BEARER, responses={201: {"links": NEW_SESSION_LINKS}})
def create(body: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """Create a session."""
    return sessions.create_session(get_db(), g.user_id, body["title"], get_session_limits()), 201


@bp.get("/sessions")
@login_required
@bp.arguments(SessionPageQuery, location="query", as_kwargs=True)
@bp.alt_response(200, schema=SessionPage, success=True, description="Newest first.")
@bp.alt_response(429, schema=ErrorResponse, description="Too many searches run at once.")
@bp.doc(security=BEARER)
def index(limit: int, cursor: str | None = None, q: str | None = None) -> dict[str, Any]:
    """List the caller's sessions, newest first, a page at a time; with `q`, those matching."""
    after = session_key(cursor) if cursor else None
    if q is None:
        rows, key = sessions.list_sessions(get_db(), g.user_id, limit, after)
        return {"sessions": rows, "next_cursor": key and session_cursor(key), "partial": False}
    gate = get_search_gate()
    with gate.enter(g.user_id):
        found = search.search_sessions(get_db(), g.user_id, q, limit, after, gate.budget)
    cursor = found.next_key and session_cursor(found.next_key)
    return {"sessions": found.sessions, "next_cursor": cursor, "partial": found.partial}


@bp.get("/sessions/<session_id>")
@login_required
@bp.arguments(SessionQuery, location="query", as_kwargs=True)
@bp.alt_response(200, schema=SessionDetail, success=True, description="The session.")
@bp.doc(security=BEARER)
def show(session_id: str, events: bool) -> dict[str, Any]:
    """Show a session with its newest messages (`earlier_cursor` pages the rest), usage and
    cost."""
    return sessions.get_session(get_db(), g.user_id, session_id, get_prices(), newest(), events)


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
    """Download a session (its active branch as stored) as Markdown or JSON, streamed."""
    head, ids = sessions.session_head(get_db(), g.user_id, session_id, get_prices())
    parts = export.parts(get_db(), head, ids, format)
    return Response(
        _streamed(export.body(parts, get_engine().deps.store.call)),
        content_type=export.FORMATS[format],
        headers={
            "Content-Disposition": f'attachment; filename="{export.filename(head, format)}"',
            "Cache-Control": "no-store",
        },
        direct_passthrough=True,
    )


@bp.get("/sessions/<session_id>/messages")
@login_required
@bp.arguments(MessagePageQuery, location="query", as_kwargs=True)
@bp.alt_response(200, schema=MessagePage, success=True, description="Oldest first.")
@bp.doc(security=BEARER)
def messages(
    session_id: str,
    limit: int,
    events: bool,
    cursor: str | None = None,
    before: str | None = None,
) -> dict[str, Any]:
    """List a session's messages, oldest first, a page at a time (forwards, or `before`)."""
    after, end = (int(cursor) if cursor else None), (int(before) if before else None)
    db, user = get_db(), g.user_id
    rows, key, earlier = sessions.list_messages(db, user, session_id, limit, after, end, events)
    return {
        "messages": rows,
        "next_cursor": None if key is None else str(key),
        "earlier_cursor": None if earlier is None else str(earlier),
    }


@bp.put("/sessions/<session_id>/active_leaf")
@login_required
@bp.arguments(ActiveLeafRequest)
@bp.arguments(SessionQuery, location="query", as_kwargs=True)
@bp.alt_response(200, schema=SessionDetail, success=True, description="The session, switched.")
@bp.alt_response(409, schema=ErrorResponse, description="A turn is running on the session.")
@bp.doc(security=BEARER)
def switch(body: dict[str, Any], session_id: str, events: bool) -> dict[str, Any]:
    """Show another branch: the one through `message_id` (to its newest end)."""
    sessions.switch_branch(get_db(), g.user_id, session_id, body["message_id"])
    return sessions.get_session(get_db(), g.user_id, session_id, get_prices(), newest(), events)


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


def newest() -> int:
    """How many of a session's newest messages its detail shows (SESSION_MESSAGES)."""
    return get_settings().session_messages


def _streamed(body: BodyFactory) -> Iterable[bytes]:
    """A body the host streams from its loop, else one the engine's loop runs."""
    hook = request.environ.get(STREAM_HOOK)
    return hook(body) if hook is not None else get_engine().runtime.iterate(body)

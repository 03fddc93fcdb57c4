"""The chat page: static HTML, CSS and JS modules from web/, under a strict policy."""

from __future__ import annotations

import json
from pathlib import Path

from flask import Response, send_from_directory

from routes.api import Blueprint
from routes.extensions import get_settings
from streaming.wire.events import EVENT_TYPES

WEB = Path(__file__).resolve().parents[2] / "web"

# Only our own files run. Model output is parsed only by DOMPurify (web/js/markdown.js), the
# one Trusted Types policy allowed; any other HTML sink (innerHTML and friends) is an error.
# No page may be framed (clickjacking), and no page sends where it was opened from.
CSP = "; ".join(
    [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self'",
        "connect-src 'self'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
        "require-trusted-types-for 'script'",
        "trusted-types dompurify",
    ]
)

# /docs: Swagger UI (web/vendor) and web/js/docs.js only, over /openapi.json. It draws its
# icons from data: URLs and sets HTML itself (no Trusted Types here).
DOCS_CSP = "; ".join(
    [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
    ]
)

PAGE_HEADERS = {
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}

bp = Blueprint(
    "web", __name__, static_folder=str(WEB), static_url_path="/web", description="The chat page."
)


@bp.get("/")
@bp.alt_response(200, success=True, content_type="text/html", description="The page.")
@bp.doc(responses={200: {"content": {"text/html": {"schema": {"type": "string"}}}}})
def index() -> Response:
    """Serve the chat page."""
    return send_from_directory(WEB, "index.html", max_age=0)


@bp.get("/c/<session_id>")
@bp.alt_response(200, success=True, content_type="text/html", description="The page.")
@bp.doc(responses={200: {"content": {"text/html": {"schema": {"type": "string"}}}}})
def chat_page(session_id: str) -> Response:
    """Serve the chat page at one chat's address; the page opens that chat."""
    return send_from_directory(WEB, "index.html", max_age=0)


@bp.get("/docs")
@bp.alt_response(200, success=True, content_type="text/html", description="The page.")
@bp.doc(responses={200: {"content": {"text/html": {"schema": {"type": "string"}}}}})
def docs() -> Response:
    """Serve the API's documentation: Swagger UI over /openapi.json."""
    response = send_from_directory(WEB, "docs.html", max_age=0)
    response.headers["Content-Security-Policy"] = DOCS_CSP
    return response


@bp.get("/web/js/protocol.js")
@bp.alt_response(200, success=True, content_type="text/javascript", description="The module.")
@bp.doc(responses={200: {"content": {"text/javascript": {"schema": {"type": "string"}}}}})
def protocol() -> Response:
    """Serve the stream's event types, the page's timings and limits as a JS module."""
    settings = get_settings()
    poll_ms = round(settings.timings.page_poll * 1000)
    import_poll_ms = round(settings.timings.import_poll * 1000)
    source = (
        f"export const EVENT_TYPES = Object.freeze({json.dumps(list(EVENT_TYPES))});\n"
        f"export const PAGE_POLL_MS = {poll_ms};\n"
        f"export const IMPORT_POLL_MS = {import_poll_ms};\n"
        f"export const MAX_MESSAGE_CHARS = {settings.max_message_chars};\n"
    )
    return Response(source, mimetype="text/javascript", headers={"Cache-Control": "no-cache"})


@bp.after_request
def _page_headers(response: Response) -> Response:
    response.headers.setdefault("Content-Security-Policy", CSP)
    response.headers.update(PAGE_HEADERS)
    return response

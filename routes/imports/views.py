"""Statement imports: upload a file as a draft, review its rows, commit it or undo it."""

from __future__ import annotations

from typing import Any

from flask import g, request

from domain.errors import ContentTooLarge
from domain.text import one_line
from routes.api import BEARER, MULTIPART, Blueprint
from routes.auth import login_required
from routes.extensions import get_db, get_settings, get_statement_reader
from routes.imports.requests import ImportUpload, PageQuery, RowChange, RowsQuery
from routes.imports.responses import (
    CommitResult,
    ImportPage,
    ImportRecord,
    ImportRowRecord,
    RowPage,
    UndoResult,
)
from routes.responses import ErrorResponse
from routes.uploads import spooled
from services.imports import commits, review
from services.imports import undo as undoing
from services.imports.drafts import Upload, create_draft
from streaming.hosting import CLIENT_GONE

bp = Blueprint("imports", __name__, description="Bank statements imported with review.")
ID = "int(max=2147483647)"
MISSING = "Not the caller's, or no such import."


@bp.before_request
def _upload_limit() -> None:
    """The upload's body may be as large as IMPORT_MAX_BYTES, not the API's limit."""
    if request.endpoint == "imports.upload":
        limit = get_settings().import_max_bytes
        if (request.content_length or 0) > limit:
            raise ContentTooLarge(
                f"The file is over {limit} bytes (IMPORT_MAX_BYTES).", details={"limit": limit}
            )
        request.max_content_length = limit


@bp.post("/imports")
@login_required
@bp.arguments(ImportUpload, location=MULTIPART)
@bp.response(201, ImportRecord, description="The draft: accounts, reconciliation, counts.")
@bp.alt_response(413, schema=ErrorResponse, description="Over IMPORT_MAX_BYTES.")
@bp.alt_response(415, schema=ErrorResponse, description="Not a statement format we read.")
@bp.alt_response(
    422,
    schema=ErrorResponse,
    description="Does not parse, mapping_required, reader_limit or reader_crashed.",
)
@bp.alt_response(429, schema=ErrorResponse, description="Too many uploads running (import_busy).")
@bp.doc(security=BEARER)
def upload(form: dict[str, Any]) -> dict[str, Any]:
    """Parse a statement into a draft; nothing is stored from a file that fails."""
    sent = form.pop("file")
    # On disk since it was parsed, and hashed then: the reader's process reads it there.
    spool = spooled(sent)
    filename = one_line(sent.filename or "")
    # Our host says when the client has gone: the file's reader is stopped then.
    with get_statement_reader().admit(g.user_id, request.environ.get(CLIENT_GONE)):
        upload = Upload(data=spool.path, filename=filename, sha256=spool.digest(), **form)
        db = get_db()
        return review.show(db, g.user_id, create_draft(db, g.user_id, upload))


@bp.get("/imports")
@login_required
@bp.arguments(PageQuery, location="query")
@bp.response(200, ImportPage)
@bp.doc(security=BEARER)
def imports(query: dict[str, Any]) -> dict[str, Any]:
    """List the caller's imports, newest first."""
    cursor = int(query["cursor"]) if "cursor" in query else None
    return review.listing(get_db(), g.user_id, query["limit"], cursor)


@bp.get(f"/imports/<{ID}:import_id>")
@login_required
@bp.response(200, ImportRecord)
@bp.alt_response(404, schema=ErrorResponse, description=MISSING)
@bp.doc(security=BEARER)
def show(import_id: int) -> dict[str, Any]:
    """Show an import: its accounts, reconciliation and counts per row status."""
    return review.show(get_db(), g.user_id, import_id)


@bp.get(f"/imports/<{ID}:import_id>/rows")
@login_required
@bp.arguments(RowsQuery, location="query")
@bp.response(200, RowPage)
@bp.alt_response(404, schema=ErrorResponse, description=MISSING)
@bp.doc(security=BEARER)
def rows(query: dict[str, Any], import_id: int) -> dict[str, Any]:
    """List an import's rows in file order, optionally of one status."""
    cursor = int(query["cursor"]) if "cursor" in query else None
    return review.rows(
        get_db(),
        g.user_id,
        import_id,
        status=query.get("status"),
        limit=query["limit"],
        cursor=cursor,
    )


@bp.patch(f"/imports/<{ID}:import_id>/rows/<{ID}:row_id>")
@login_required
@bp.arguments(RowChange)
@bp.response(200, ImportRowRecord)
@bp.alt_response(404, schema=ErrorResponse, description=MISSING)
@bp.alt_response(409, schema=ErrorResponse, description="The import is not a draft.")
@bp.doc(security=BEARER)
def edit_row(changes: dict[str, Any], import_id: int, row_id: int) -> dict[str, Any]:
    """Include or exclude a draft's row, or set its category."""
    return review.edit_row(get_db(), g.user_id, import_id, row_id, changes)


@bp.post(f"/imports/<{ID}:import_id>/commit")
@login_required
@bp.response(200, CommitResult, description="Committed; `added` is 0 when it already was.")
@bp.alt_response(404, schema=ErrorResponse, description=MISSING)
@bp.alt_response(
    409, schema=ErrorResponse, description="The import was undone, or is busy (import_busy)."
)
@bp.doc(security=BEARER)
def commit(import_id: int) -> dict[str, Any]:
    """Add the draft's included rows as transactions, a batch of rows per transaction (a
    stalled commit resumes)."""
    db = get_db()
    added = commits.commit(db, g.user_id, import_id)
    return {**review.show(db, g.user_id, import_id), "added": added}


@bp.delete(f"/imports/<{ID}:import_id>")
@login_required
@bp.response(200, UndoResult)
@bp.alt_response(404, schema=ErrorResponse, description=MISSING)
@bp.alt_response(409, schema=ErrorResponse, description="Being drafted, committed or undone.")
@bp.doc(security=BEARER)
def undo(import_id: int) -> dict[str, Any]:
    """Discard a draft, or undo a committed import (exactly its transactions), a batch of
    rows per transaction; a stalled draft, commit or undo is discarded or undone."""
    status, removed = undoing.undo(get_db(), g.user_id, import_id)
    return {"id": import_id, "status": status, "removed_transactions": removed}

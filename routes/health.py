"""Liveness that proves the database answers."""

from __future__ import annotations

from flask import Blueprint
from sqlalchemy import text

from routes.deps import get_db
from routes.errors import APIError

bp = Blueprint("health", __name__)


@bp.get("/healthz")
def healthz() -> dict[str, str]:
    """Return ok once the database answers a query."""
    try:
        with get_db().read() as s:
            s.execute(text("SELECT 1"))
    except Exception as err:
        raise APIError(503, "database_unavailable", "The database does not answer.") from err
    return {"status": "ok"}

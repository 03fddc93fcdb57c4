"""Liveness that proves the database answers."""

from __future__ import annotations

from sqlalchemy import text

from domain.errors import StorageUnavailable
from routes.api import Blueprint
from routes.extensions import get_db
from routes.site.responses import Health

bp = Blueprint("health", __name__, description="Liveness.")


@bp.get("/healthz")
@bp.alt_response(200, schema=Health, success=True, description="The database answers.")
def healthz() -> dict[str, str]:
    """Return ok once the database answers a query."""
    try:
        with get_db().read() as s:
            s.execute(text("SELECT 1"))
    except Exception as err:
        raise StorageUnavailable() from err  # 503 with Retry-After, as every outage
    return {"status": "ok"}

"""The access log: one JSON line per request on the `chat.access` logger, and request latency.

Flask describes each request (route template, user, turn) when its response is ready.
Behind the ASGI front the description goes into the ASGI scope and the front writes the
line when the response is over, so a stream served from the event loop is logged when it
ends, with its whole duration; without the front (`flask run`, tests) Flask writes it.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any

from flask import Flask, Response, g, request

from telemetry.metrics import REQUEST_SECONDS

ACCESS = logging.getLogger("chat.access")
UNMATCHED = "unmatched"


def setup_logger() -> None:
    """Write the access log's lines as they are (bare JSON) to stderr, once per process."""
    if ACCESS.handlers:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    ACCESS.addHandler(handler)
    ACCESS.setLevel(logging.INFO)
    ACCESS.propagate = False


def write(
    method: str,
    path: str,
    status: int,
    seconds: float,
    user_id: int | None,
    turn_id: str | None,
    stream: bool = False,
) -> None:
    """Log one request: `path` is its route template (the raw path when no route matched)."""
    if not ACCESS.isEnabledFor(logging.INFO):
        return
    line = {
        "method": method,
        "path": path,
        "status": status,
        "duration_ms": round(seconds * 1000, 1),
        "user_id": user_id,
        "turn_id": turn_id,
    }
    if stream:
        line["stream"] = True
    ACCESS.info(json.dumps(line, separators=(",", ":")))


def observe(method: str, route: str | None, status: int, seconds: float) -> None:
    """Record a request's latency in the request histogram."""
    REQUEST_SECONDS.labels(method, route or UNMATCHED, str(status)).observe(seconds)


def install(app: Flask) -> None:
    """Describe every request; log it here unless the ASGI front will."""

    @app.before_request
    def _started() -> None:
        g.access_started = time.perf_counter()

    @app.after_request
    def _describe(response: Response) -> Response:
        record = {
            "route": request.url_rule.rule if request.url_rule is not None else None,
            "user_id": g.get("user_id"),
            "turn_id": g.get("turn_id")
            or (request.view_args or {}).get("turn_id")
            or response.headers.get("X-Turn-Id"),
        }
        scope = request.environ.get("asgi.scope")
        if scope is not None:
            scope["access"] = record
            return response
        seconds = time.perf_counter() - g.get("access_started", time.perf_counter())
        route = record["route"] or request.path
        observe(request.method, record["route"], response.status_code, seconds)
        write(request.method, route, response.status_code, seconds, **_who(record))
        return response


def _who(record: dict[str, Any]) -> dict[str, Any]:
    return {"user_id": record["user_id"], "turn_id": record["turn_id"]}

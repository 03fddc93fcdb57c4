"""The access log: one JSON line per request on the `chat.access` logger, and request latency.

Flask describes each request (route template, user, turn) when its response is ready and
writes the line then; an event stream outlives its view, so its line is written when the
stream ends, with its whole duration (`streamed`), whoever runs the stream.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Callable
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


def host_answered(method: str, path: str, status: int, seconds: float) -> None:
    """Log a request the HTTP host answered itself (`path` raw: no route matched it)."""
    observe(method, None, status, seconds)
    write(method, path, status, seconds, None, None)


def install(app: Flask) -> None:
    """Describe every request, and log it now or, for a stream, when the stream ends."""

    @app.before_request
    def _started() -> None:
        g.access_started = time.perf_counter()

    @app.after_request
    def _describe(response: Response) -> Response:
        record = g.get("access_record")
        if record is None:
            record = g.access_record = {}
        record.update(
            method=request.method,
            route=request.url_rule.rule if request.url_rule is not None else None,
            path=request.path,
            status=response.status_code,
            user_id=g.get("user_id"),
            turn_id=g.get("turn_id")
            or (request.view_args or {}).get("turn_id")
            or response.headers.get("X-Turn-Id"),
        )
        started = g.get("access_started", time.perf_counter())
        seconds = time.perf_counter() - started
        observe(request.method, record["route"], response.status_code, seconds)
        if not g.get("access_streamed"):
            _write(record, seconds)
        return response


def streamed() -> Callable[[], None]:
    """In a view: log this request when its stream ends (call the result then), not now."""
    g.access_streamed = True
    record = g.access_record = g.get("access_record") or {}
    started = g.get("access_started", time.perf_counter())

    def ended() -> None:
        _write(record, time.perf_counter() - started, stream=True)

    return ended


def _write(record: dict[str, Any], seconds: float, stream: bool = False) -> None:
    path = record.get("route") or record.get("path", "")
    write(
        record.get("method", ""),
        path,
        record.get("status", 0),
        seconds,
        record.get("user_id"),
        record.get("turn_id"),
        stream,
    )

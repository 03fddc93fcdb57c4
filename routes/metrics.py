"""Prometheus metrics at /metrics: open, or behind `Authorization: Bearer $METRICS_TOKEN`."""

from __future__ import annotations

import hmac

from flask import Blueprint, Response, current_app, request

from routes.errors import APIError
from telemetry.metrics import render

bp = Blueprint("metrics", __name__)


@bp.get("/metrics")
def metrics() -> Response:
    """Every metric of this deployment's workers, in Prometheus' text format."""
    expected = current_app.config.get("METRICS_TOKEN")
    if expected:
        scheme, _, given = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip(), expected):
            raise APIError(401, "unauthorized", "Send 'Authorization: Bearer <METRICS_TOKEN>'.")
    body, content_type = render()
    return Response(body, content_type=content_type, headers={"Cache-Control": "no-store"})

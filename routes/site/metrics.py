"""Prometheus metrics at /metrics: open, or behind `Authorization: Bearer $METRICS_TOKEN`."""

from __future__ import annotations

import hmac

from flask import Response, request

from domain.errors import Unauthorized
from routes.api import Blueprint
from routes.extensions import get_settings
from telemetry.metrics import render

bp = Blueprint("metrics", __name__, description="Prometheus metrics of every worker.")


@bp.get("/metrics")
@bp.alt_response(
    200,
    success=True,
    content_type="text/plain",
    description="Prometheus' text exposition format.",
)
@bp.doc(
    responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}}}},
    description="No token needed unless METRICS_TOKEN is set; then send it as a Bearer token.",
)
def metrics() -> Response:
    """Every metric of this deployment's workers, in Prometheus' text format."""
    expected = get_settings().metrics_token
    if expected:
        scheme, _, given = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip(), expected):
            raise Unauthorized("Send 'Authorization: Bearer <METRICS_TOKEN>'.")
    body, content_type = render()
    return Response(body, content_type=content_type, headers={"Cache-Control": "no-store"})

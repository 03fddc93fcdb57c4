"""One JSON error shape for every failure: {"error": {"code", "message", "details"}}.

One handler renders the error tree (domain/errors.py); the others adapt what foreign code
raises (marshmallow and webargs validation, werkzeug's HTTP errors, database outages and
refused values, anything unexpected) to it.
"""

from __future__ import annotations

import logging
from typing import Any

from flask import Flask, Response, jsonify
from marshmallow import ValidationError
from werkzeug.exceptions import HTTPException

from domain.errors import APIError, LimitExceeded, StorageUnavailable, Unprocessable
from models.db import OUTAGE_ERRORS, is_bad_value
from routes.extensions import get_settings
from streaming.wire.protocol import error_body, error_json
from telemetry import audit
from telemetry.metrics import LIMIT_REFUSALS

log = logging.getLogger(__name__)
JSON = b"application/json"


def render_host_error(status: int, code: str, message: str) -> tuple[bytes, bytes]:
    """What the HTTP host answers when it refuses a request itself: JSON in the one shape."""
    return JSON, error_json(code, message)


def register_error_handlers(app: Flask) -> None:
    """Render every error, expected or not, as the shared JSON shape."""
    app.register_error_handler(APIError, render)
    for outage in OUTAGE_ERRORS:
        app.register_error_handler(outage, _outage)
    app.register_error_handler(ValidationError, _validation)
    app.register_error_handler(HTTPException, _http)
    app.register_error_handler(Exception, _unexpected)


def render(err: APIError) -> Response:
    """The response for an error of the tree: its status, the one shape, its headers."""
    timings = get_settings().timings
    response = jsonify(error_body(err.code, err.message, err.body_details(timings)))
    response.status_code = err.status
    response.headers.update(err.headers(timings))
    if isinstance(err, StorageUnavailable):
        cause = err.__cause__ or err
        log.warning("the database is unreachable: %s", type(cause).__name__)
    elif isinstance(err, LimitExceeded):
        wait = err.retry_seconds(timings)
        LIMIT_REFUSALS.labels(err.code).inc()
        audit.record("limit_refused", limit=err.code, retry_after=wait, details=err.details)
    return response


def _outage(err: Exception) -> Response:
    refusal = StorageUnavailable()
    refusal.__cause__ = err
    return render(refusal)


def _validation(err: ValidationError) -> Response:
    fields = err.messages if isinstance(err.messages, dict) else {"_schema": err.messages}
    return render(Unprocessable("The request body is invalid.", details=fields))


def _http(err: HTTPException) -> Response:
    messages = getattr(err, "data", {}).get("messages")
    if err.code == 422 and isinstance(messages, dict):
        # webargs' validation of a body, query string or headers: fields by name.
        details: dict[str, Any] = {}
        for location in messages.values():
            details.update(location if isinstance(location, dict) else {"_schema": location})
        return render(Unprocessable("The request is invalid.", details=details))
    code = (err.name or "error").lower().replace(" ", "_")
    response = jsonify(error_body(code, err.description or err.name))
    response.status_code = err.code or 500
    return response


def _unexpected(err: Exception) -> Response:
    if is_bad_value(err):
        # Input validation let through a value the database refuses: the request's fault.
        log.warning("the database refused a value: %s", type(err).__name__)
        return render(
            Unprocessable(
                "A value in the request cannot be stored; nothing changed.", code="invalid_value"
            )
        )
    log.exception("unhandled error")
    return render(APIError())

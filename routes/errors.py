"""One JSON error shape for every failure: {"error": {"code", "message", "details"}}."""

from __future__ import annotations

import logging
import math
from typing import Any

from flask import Flask, Response, jsonify
from marshmallow import ValidationError
from werkzeug.exceptions import HTTPException

from engine.errors import (
    Draining,
    LimitExceeded,
    NotFoundError,
    Refused,
    StorageUnavailable,
    TurnConflict,
)
from models.db import OUTAGE_ERRORS, is_bad_value
from routes.deps import get_settings
from streaming.protocol import error_body
from telemetry import audit
from telemetry.metrics import LIMIT_REFUSALS

log = logging.getLogger(__name__)


class APIError(Exception):
    """An error a client can act on, rendered with the shared error shape."""

    def __init__(
        self, status: int, code: str, message: str, details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.details = status, code, message, details or {}


def error_response(
    status: int, code: str, message: str, details: dict[str, Any] | None = None
) -> tuple[Response, int]:
    """Build the JSON error response."""
    return jsonify(error_body(code, message, details)), status


def register_error_handlers(app: Flask) -> None:
    """Render every error, expected or not, as the shared JSON shape."""

    @app.errorhandler(APIError)
    def _api_error(err: APIError) -> tuple[Response, int]:
        return error_response(err.status, err.code, err.message, err.details)

    @app.errorhandler(NotFoundError)
    def _not_found(err: NotFoundError) -> tuple[Response, int]:
        return error_response(404, "not_found", f"No such {err.kind}.")

    @app.errorhandler(TurnConflict)
    def _conflict(err: TurnConflict) -> tuple[Response, int]:
        return error_response(
            409, "turn_in_progress", "A turn is already running on this session; wait or cancel it."
        )

    @app.errorhandler(Refused)
    def _refused(err: Refused) -> tuple[Response, int]:
        details = {err.field: [err.message]} if err.field else None
        return error_response(409 if err.conflict else 422, err.code, err.message, details)

    @app.errorhandler(Draining)
    def _draining(err: Draining) -> tuple[Response, int]:
        response, status = error_response(
            503, "server_restarting", "This server is restarting; retry in a moment."
        )
        retry = get_settings().timings.restart_retry_after
        response.headers["Retry-After"] = str(max(1, math.ceil(retry)))
        return response, status

    def _storage(err: Exception) -> tuple[Response, int]:
        log.warning("the database is unreachable: %s", type(err).__name__)
        response, status = error_response(
            503,
            StorageUnavailable.code,
            "The server cannot reach its database right now; nothing was changed. Retry soon.",
        )
        retry = get_settings().timings.outage_retry_after
        response.headers["Retry-After"] = str(max(1, math.ceil(retry)))
        return response, status

    for outage in (StorageUnavailable, *OUTAGE_ERRORS):
        app.register_error_handler(outage, _storage)

    @app.errorhandler(LimitExceeded)
    def _limited(err: LimitExceeded) -> tuple[Response, int]:
        wait = max(1, math.ceil(err.retry_after))
        details = {**err.details, "retry_after": wait}
        response, status = error_response(429, err.code, err.message, details)
        response.headers["Retry-After"] = str(wait)
        LIMIT_REFUSALS.labels(err.code).inc()
        audit.record("limit_refused", limit=err.code, retry_after=wait, details=err.details)
        return response, status

    @app.errorhandler(ValidationError)
    def _validation(err: ValidationError) -> tuple[Response, int]:
        fields = err.messages if isinstance(err.messages, dict) else {"_schema": err.messages}
        return error_response(422, "validation_error", "The request body is invalid.", fields)

    @app.errorhandler(HTTPException)
    def _http(err: HTTPException) -> tuple[Response, int]:
        messages = getattr(err, "data", {}).get("messages")
        if err.code == 422 and isinstance(messages, dict):
            # webargs' validation of a body, query string or headers: fields by name.
            details: dict[str, Any] = {}
            for location in messages.values():
                details.update(location if isinstance(location, dict) else {"_schema": location})
            return error_response(422, "validation_error", "The request is invalid.", details)
        code = (err.name or "error").lower().replace(" ", "_")
        return error_response(err.code or 500, code, err.description or err.name)

    @app.errorhandler(Exception)
    def _unexpected(err: Exception) -> tuple[Response, int]:
        if is_bad_value(err):
            # Input validation let through a value the database refuses: the request's fault.
            log.warning("the database refused a value: %s", type(err).__name__)
            return error_response(
                422, "invalid_value", "A value in the request cannot be stored; nothing changed."
            )
        log.exception("unhandled error")
        return error_response(500, "internal_error", "Something went wrong on our side.")

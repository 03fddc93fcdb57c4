"""Marshmallow schemas for request bodies, and the one place that parses JSON bodies."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from flask import current_app, request
from marshmallow import Schema, ValidationError, fields, post_load, validate, validates

from routes.errors import APIError


def storable(value: str) -> None:
    """Reject text no database can store: NUL characters and lone UTF-16 surrogates."""
    if "\x00" in value:
        raise ValidationError("Must not contain NUL characters.")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as err:
        raise ValidationError("Must be valid Unicode (no lone surrogates).") from err


class TurnRequest(Schema):
    """Body of POST /api/sessions/<id>/turns."""

    message = fields.String(required=True, validate=storable)

    @validates("message")
    def _not_blank(self, value: str, **_: Any) -> None:
        if not value.strip():
            raise ValidationError("The message must not be empty.")


class ChatStreamRequest(TurnRequest):
    """Body of POST /api/chat/stream."""

    session_id = fields.String(
        load_default=None, validate=[validate.Length(min=1, max=64), storable]
    )


class SessionRequest(Schema):
    """Body of POST /api/sessions (optional)."""

    title = fields.String(load_default=None, validate=[validate.Length(max=200), storable])


MAX_TOKEN_LIFETIME = timedelta(days=3650)


class TokenRequest(Schema):
    """Body of POST /api/tokens: a name and, optionally, when the token expires."""

    name = fields.String(required=True, validate=[validate.Length(min=1, max=100), storable])
    expires_in = fields.Integer(
        strict=True, validate=validate.Range(min=60, max=int(MAX_TOKEN_LIFETIME.total_seconds()))
    )
    expires_at = fields.AwareDateTime()

    @validates("name")
    def _named(self, value: str, **_: Any) -> None:
        if not value.strip():
            raise ValidationError("The name must not be empty.")

    @validates("expires_at")
    def _future(self, value: datetime, **_: Any) -> None:
        now = datetime.now(UTC)
        if value <= now:
            raise ValidationError("Must be in the future.")
        if value > now + MAX_TOKEN_LIFETIME:
            raise ValidationError("Must be within ten years.")

    @post_load
    def _expiry(self, data: dict[str, Any], **_: Any) -> dict[str, Any]:
        if "expires_in" in data and "expires_at" in data:
            raise ValidationError("Give expires_in or expires_at, not both.", "_schema")
        seconds = data.pop("expires_in", None)
        if seconds is not None:
            data["expires_at"] = datetime.now(UTC) + timedelta(seconds=seconds)
        elif data.get("expires_at") is not None:
            data["expires_at"] = data["expires_at"].astimezone(UTC)
        data.setdefault("expires_at", None)
        data["name"] = data["name"].strip()
        return data


def parse_body(schema: Schema, optional: bool = False) -> dict[str, Any]:
    """Load the JSON body with `schema`; raise a 4xx APIError for any bad input."""
    raw = request.get_data(cache=True)
    if not raw.strip() and optional:
        return schema.load({})
    if request.mimetype != "application/json":
        raise APIError(415, "unsupported_media_type", "Send the body as application/json.")
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError) as err:
        raise APIError(400, "invalid_json", "The request body is not valid JSON.") from err
    if not isinstance(body, dict):
        raise APIError(
            422,
            "validation_error",
            "The request body must be a JSON object.",
            {"_schema": ["Expected a JSON object."]},
        )
    data = schema.load(body)
    limit = current_app.config["MAX_MESSAGE_CHARS"]
    if len(data.get("message") or "") > limit:
        raise APIError(
            413,
            "message_too_large",
            f"The message is over {limit} characters.",
            {"message": [f"Longer than the limit of {limit} characters."]},
        )
    return data

"""Request schemas of API tokens: a new token's name and lifetime."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from marshmallow import Schema, ValidationError, fields, post_load, validate, validates

from routes.requests import OneLine, storable

MAX_TOKEN_LIFETIME = timedelta(days=3650)


class TokenRequest(Schema):
    """Body of POST /api/tokens: a name and, optionally, when the token expires."""

    name = fields.String(
        required=True, validate=[validate.Length(min=1, max=100), OneLine(blank=True), storable]
    )
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

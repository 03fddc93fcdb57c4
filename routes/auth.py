"""Bearer-token authentication and signed, expiring tokens for EventSource URLs."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

from flask import current_app, g, request
from itsdangerous import BadSignature, SignatureExpired, URLSafeTimedSerializer
from sqlalchemy import select

from models import ApiToken
from routes.deps import get_db
from routes.errors import APIError

F = TypeVar("F", bound=Callable[..., Any])


def _serializer() -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(current_app.config["SECRET_KEY"], salt="turn-events")


def sign_events_token(user_id: int, turn_id: str) -> str:
    """Return a token that lets a browser read one turn's events without headers."""
    return _serializer().dumps({"u": user_id, "t": turn_id})


def _user_from_events_token(token: str, turn_id: str) -> int:
    max_age = current_app.config["EVENTS_TOKEN_MAX_AGE"]
    try:
        data = _serializer().loads(token, max_age=max_age)
    except SignatureExpired as err:
        raise APIError(401, "token_expired", "The events token has expired.") from err
    except BadSignature as err:
        raise APIError(401, "invalid_token", "The events token is not valid.") from err
    if data.get("t") != turn_id:
        raise APIError(401, "invalid_token", "The events token is for another turn.")
    return int(data["u"])


def _user_from_bearer() -> int:
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise APIError(401, "unauthorized", "Send 'Authorization: Bearer <token>'.")
    with get_db().read() as s:
        user_id = s.scalar(
            select(ApiToken.user_id).where(ApiToken.token_hash == ApiToken.hash(token.strip()))
        )
    if user_id is None:
        raise APIError(401, "unauthorized", "The API token is not valid.")
    return user_id


def login_required(view: F) -> F:
    """Require a bearer token; set `g.user_id`."""

    @wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        g.user_id = _user_from_bearer()
        return view(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def events_auth(view: F) -> F:
    """Accept a bearer token or a signed `?token=` for the turn in the URL."""

    @wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        token = request.args.get("token")
        if token and not request.headers.get("Authorization", "").strip():
            g.user_id = _user_from_events_token(token, kwargs["turn_id"])
        else:
            g.user_id = _user_from_bearer()
        return view(*args, **kwargs)

    return wrapper  # type: ignore[return-value]

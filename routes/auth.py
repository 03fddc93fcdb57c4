"""Bearer-token authentication and signed, expiring tokens for EventSource URLs."""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

from flask import g, request
from itsdangerous import BadSignature, SignatureExpired, URLSafeTimedSerializer

from domain.errors import Unauthorized
from routes.extensions import get_db, get_settings
from services.api_tokens import authenticate, check_token_id

F = TypeVar("F", bound=Callable[..., Any])


def _serializer() -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(get_settings().secret_key, salt="turn-events")


def sign_events_token(user_id: int, turn_id: str) -> str:
    """Return a token that lets a browser read one turn's events without headers.

    It names the API token it was made with, so revoking that token ends it too.
    """
    return _serializer().dumps({"u": user_id, "t": turn_id, "k": g.get("token_id")})


def _user_from_events_token(token: str, turn_id: str) -> tuple[int, int | None]:
    # Whole seconds, as itsdangerous counts them (a scaled lifetime may have a fraction).
    max_age = math.ceil(get_settings().timings.events_token_max_age)
    try:
        data = _serializer().loads(token, max_age=max_age)
    except SignatureExpired as err:
        raise Unauthorized("The events token has expired.", code="token_expired") from err
    except BadSignature as err:
        raise Unauthorized("The events token is not valid.", code="invalid_token") from err
    if data.get("t") != turn_id:
        raise Unauthorized("The events token is for another turn.", code="invalid_token")
    token_id = data.get("k")
    if token_id is not None:
        check_token_id(get_db(), int(token_id))
    return int(data["u"]), token_id


def _user_from_bearer() -> tuple[int, int]:
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized("Send 'Authorization: Bearer <token>'.")
    caller = authenticate(get_db(), token.strip())
    return caller.user_id, caller.token_id


def _identify(user_id: int, token_id: int | None) -> None:
    """Record the caller for the view (and its stream's token watch, and the access log)."""
    g.user_id, g.token_id = user_id, token_id


def login_required(view: F) -> F:
    """Require a bearer token; set `g.user_id`."""

    @wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        _identify(*_user_from_bearer())
        return view(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def events_auth(view: F) -> F:
    """Accept a bearer token or a signed `?token=` for the turn in the URL."""

    @wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        token = request.args.get("token")
        if token and not request.headers.get("Authorization", "").strip():
            _identify(*_user_from_events_token(token, kwargs["turn_id"]))
        else:
            _identify(*_user_from_bearer())
        return view(*args, **kwargs)

    return wrapper  # type: ignore[return-value]

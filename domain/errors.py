"""Every error of the app, in two branches: what a client is told, and why a turn stops.

    Exception
     +-- APIError                      500 internal_error: rendered for a client
     |    +-- BadRequest               400 bad_request
     |    +-- Unauthorized             401 unauthorized
     |    |    +-- BearerChallenge     401 with WWW-Authenticate (/mcp)
     |    +-- InsufficientScope        403 insufficient_scope, WWW-Authenticate
     |    +-- NotFound                 404 not_found ("No such <kind>.")
     |    +-- Conflict                 409 (the raise site names the conflict)
     |    |    +-- TurnConflict        409 turn_in_progress
     |    +-- ContentTooLarge          413 content_too_large
     |    +-- UnsupportedMediaType     415 unsupported_media_type
     |    +-- RangeNotSatisfiable      416 range_not_satisfiable
     |    +-- Unprocessable            422 validation_error
     |    +-- TooManyRequests          429, Retry-After, details.retry_after
     |    |    +-- LimitExceeded       429 (the limit's code), counted and audited
     |    +-- ServiceUnavailable       503 service_unavailable, Retry-After
     |         +-- StorageUnavailable  503 storage_unavailable
     |         |    +-- OutageOutlasted  a write waited out STORE_OUTAGE_SECONDS
     |         +-- Draining            503 server_restarting
     +-- TurnStop                      never rendered: a turn's own control flow
          +-- TurnCancelled
          +-- TurnFailed               its code and message end the turn's event stream
          |    +-- UpstreamInterrupted
          +-- LeaseLost
          +-- EndedElsewhere

routes/error_handler.py renders any APIError as {"error": {"code", "message", "details"}} with its
headers, so a new client error is one subclass here (or a `code=` at its raise site). The HTTP
host answers the requests it refuses itself (400, 408, 413, 414, 431, 501, 503 server_busy)
without importing the app: it words them through the app's renderer (streaming/hosting.py).
A few exceptions stay local to the module that raises and catches them (LeaveQuietly in
engine/turns/turn.py, ClaimLost in tools/registry.py): they never leave it.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar


class APIError(Exception):
    """An error a client is told of: a status, a code, a message, details and headers."""

    status: ClassVar[int] = 500
    code: str = "internal_error"
    message: str = "Something went wrong on our side."
    # The field of `config.Timings` that says how long to wait, when the raise site gives no
    # retry_after (read by name: the ground floor imports nothing of ours).
    retry_timing: ClassVar[str | None] = None

    def __init__(
        self,
        message: str | None = None,
        *,
        code: str | None = None,
        details: dict[str, Any] | None = None,
        field: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        self.message = message if message is not None else type(self).message
        self.code = code if code is not None else type(self).code
        self.details = dict(details or {})
        if field is not None:
            self.details[field] = [self.message]
        self.retry_after = retry_after
        super().__init__(self.message)

    def retry_seconds(self, timings: object) -> int | None:
        """Whole seconds a client should wait before retrying (at least 1), or None."""
        wait = self.retry_after
        if wait is None and self.retry_timing is not None:
            wait = float(getattr(timings, self.retry_timing))
        return None if wait is None else max(1, math.ceil(wait))

    def headers(self, timings: object) -> dict[str, str]:
        """The response headers this error adds (Retry-After)."""
        wait = self.retry_seconds(timings)
        return {} if wait is None else {"Retry-After": str(wait)}

    def body_details(self, timings: object) -> dict[str, Any]:
        """The `details` the client is shown."""
        return self.details


class BadRequest(APIError):
    """The request cannot be read (malformed JSON)."""

    status = 400
    code = "bad_request"


class Unauthorized(APIError):
    """No credentials, or credentials that are unknown, revoked or expired."""

    status = 401
    code = "unauthorized"


class BearerChallenge(Unauthorized):
    """401 at a protected resource (`/mcp`), with the `WWW-Authenticate: Bearer` challenge
    that names its metadata (RFC 6750, RFC 9728), so an app can find where to sign in."""

    def __init__(self, message: str, *, challenge: str) -> None:
        super().__init__(message)
        self.challenge = challenge

    @classmethod
    def of(cls, refused: Unauthorized, challenge: str) -> BearerChallenge:
        """A token refused for its own reason (its code), with the challenge."""
        made = cls(refused.message, challenge=challenge)
        made.code = refused.code
        return made

    def headers(self, timings: object) -> dict[str, str]:
        """Retry-After if any, and the challenge."""
        return {**super().headers(timings), "WWW-Authenticate": self.challenge}


class InsufficientScope(APIError):
    """403: the token is valid but lacks a scope the call needs; the challenge names it."""

    status = 403
    code = "insufficient_scope"

    def __init__(self, message: str, *, challenge: str) -> None:
        super().__init__(message)
        self.challenge = challenge

    def headers(self, timings: object) -> dict[str, str]:
        """Retry-After if any, and the challenge."""
        return {**super().headers(timings), "WWW-Authenticate": self.challenge}


class NotFound(APIError):
    """The record does not exist for this user (others' records look absent too)."""

    status = 404
    code = "not_found"

    def __init__(self, kind: str = "resource", ident: str | None = None) -> None:
        super().__init__(f"No such {kind}.")
        self.kind, self.ident = kind, ident


class Conflict(APIError):
    """The request conflicts with the state of a record; the raise site names the conflict."""

    status = 409
    code = "conflict"


class TurnConflict(Conflict):
    """The session already has a running turn."""

    code = "turn_in_progress"
    message = "A turn is already running on this session; wait or cancel it."

    def __init__(self, session_id: str | None = None) -> None:
        super().__init__()
        self.session_id = session_id


class ContentTooLarge(APIError):
    """The request's content is over a limit."""

    status = 413
    code = "content_too_large"


class UnsupportedMediaType(APIError):
    """The body is not JSON in UTF-8."""

    status = 415
    code = "unsupported_media_type"


class RangeNotSatisfiable(APIError):
    """The part asked for lies past the end (a Last-Event-ID past a turn's last event)."""

    status = 416
    code = "range_not_satisfiable"


class Unprocessable(APIError):
    """Well-formed input the app does not carry out as asked; `field` names the culprit."""

    status = 422
    code = "validation_error"


class TooManyRequests(APIError):
    """Refused for now: retry after `retry_after` seconds (also in details.retry_after)."""

    status = 429
    code = "too_many_requests"

    def body_details(self, timings: object) -> dict[str, Any]:
        """The details, with the wait repeated as `retry_after`."""
        return {**self.details, "retry_after": self.retry_seconds(timings)}


class LimitExceeded(TooManyRequests):
    """A per-user limit refuses the request; nothing was written."""

    def __init__(
        self, code: str, message: str, retry_after: float, details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message, code=code, details=details, retry_after=retry_after)


class ServiceUnavailable(APIError):
    """The server cannot serve the request now; retry after Retry-After."""

    status = 503
    code = "service_unavailable"
    retry_timing = "busy_retry_after"


class StorageUnavailable(ServiceUnavailable):
    """The database is unreachable: nothing was changed."""

    code = "storage_unavailable"
    message = "The server cannot reach its database right now; nothing was changed. Retry soon."
    retry_timing = "outage_retry_after"


class OutageOutlasted(StorageUnavailable):
    """The database stayed unreachable longer than a write may wait (STORE_OUTAGE_SECONDS)."""

    message = "The server could not reach its database for too long; what was saved is kept."


class Draining(ServiceUnavailable):
    """This worker is shutting down and takes no new turns."""

    code = "server_restarting"
    message = "This server is restarting; retry in a moment."
    retry_timing = "restart_retry_after"


class TurnStop(Exception):
    """Why a turn stops early: the turn loop maps it to a status and an event, never a reply."""


class TurnCancelled(TurnStop):
    """The client asked to cancel the turn."""


class TurnFailed(TurnStop):
    """The turn cannot go on; `code` and `message` are shown to the client."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


class UpstreamInterrupted(TurnFailed):
    """The model stream broke after it started (error event, reset, stall, early end)."""


class LeaseLost(TurnStop):
    """The turn was taken over (or ended) elsewhere: this writer must stop, writing nothing."""

    def __init__(self, turn_id: str) -> None:
        super().__init__(f"turn {turn_id} is no longer ours")
        self.turn_id = turn_id


class EndedElsewhere(TurnStop):
    """The log a dead worker left already holds turn_end: only the row needs its status."""

    def __init__(self, status: str, error: tuple[str, str] | None) -> None:
        super().__init__(status)
        self.status, self.error = status, error

"""Why a turn stops early, as exceptions the turn loop maps to a status and an event."""

from __future__ import annotations


class NotFoundError(Exception):
    """The session or turn does not exist for this user (others' rows look absent too)."""

    def __init__(self, kind: str, ident: str | None = None) -> None:
        super().__init__(f"{kind} not found")
        self.kind, self.ident = kind, ident


class TurnConflict(Exception):
    """The session already has a running turn."""


class TurnCancelled(Exception):
    """The client asked to cancel the turn."""


class TurnFailed(Exception):
    """The turn cannot go on; `code` and `message` are shown to the client."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


class UpstreamInterrupted(TurnFailed):
    """The model stream broke after it started (error event, reset, stall, early end)."""


class StorageUnavailable(Exception):
    """The database stayed unreachable longer than a write may wait (STORE_OUTAGE_SECONDS)."""

    code = "storage_unavailable"
    message = "The server could not reach its database for too long; what was saved is kept."


class LeaseLost(Exception):
    """The turn was taken over (or ended) elsewhere: this writer must stop, writing nothing."""

    def __init__(self, turn_id: str) -> None:
        super().__init__(f"turn {turn_id} is no longer ours")
        self.turn_id = turn_id


class EndedElsewhere(Exception):
    """The log a dead worker left already holds turn_end: only the row needs its status."""

    def __init__(self, status: str, error: tuple[str, str] | None) -> None:
        super().__init__(status)
        self.status, self.error = status, error


class Draining(Exception):
    """This worker is shutting down and takes no new turns."""


class LimitExceeded(Exception):
    """A per-user limit refuses a new turn; nothing was written. Retry after `retry_after`."""

    def __init__(
        self, code: str, message: str, retry_after: float, details: dict[str, int] | None = None
    ) -> None:
        super().__init__(message)
        self.code, self.message, self.retry_after = code, message, retry_after
        self.details = details or {}


class Refused(Exception):
    """A request the engine does not carry out as asked (422; 409 for a `conflict`)."""

    def __init__(
        self, code: str, message: str, conflict: bool = False, field: str | None = None
    ) -> None:
        super().__init__(message)
        self.code, self.message, self.conflict, self.field = code, message, conflict, field

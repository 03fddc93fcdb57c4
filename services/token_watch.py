"""End open streams soon after their token is revoked or expires, with one poller per process.

A stream opened with a token registers it here; while any is registered, one thread asks
the database every `interval` seconds which of those tokens became unusable (one query
for all of them, whichever process revoked them). Streams check `dead()` (a dict lookup)
whenever they wake, so no stream ever queries the database for this.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime

from sqlalchemy import select

from models import ApiToken
from models.base import utcnow
from models.db import Database
from services.tokens import aware

log = logging.getLogger(__name__)
# Ids per query: well under every database's limit on bound parameters.
BATCH = 500
REVOKED = ("token_revoked", "The API token was revoked.")
EXPIRED = ("token_expired", "The API token has expired.")


class TokenWatcher:
    """The tokens of this process's open streams, and which of them are no longer usable."""

    def __init__(self, db: Database, interval: Callable[[], float]) -> None:
        self.db, self.interval = db, interval
        self._open: dict[int, int] = {}
        self._dead: dict[int, tuple[str, str]] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def open(self, token_id: int) -> None:
        """A stream authenticated by `token_id` starts; watch the token while it runs."""
        with self._lock:
            self._open[token_id] = self._open.get(token_id, 0) + 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="token-watch", daemon=True)
                self._thread.start()

    def close(self, token_id: int) -> None:
        """A stream of `token_id` ended."""
        with self._lock:
            left = self._open.get(token_id, 0) - 1
            if left > 0:
                self._open[token_id] = left
            else:
                self._open.pop(token_id, None)
                self._dead.pop(token_id, None)

    def dead(self, token_id: int) -> tuple[str, str] | None:
        """(code, message) once the token is revoked or expired, else None."""
        return self._dead.get(token_id)

    def revoked_here(self, token_id: int) -> None:
        """This process revoked the token: its streams here need not wait for the poll."""
        with self._lock:
            if token_id in self._open:
                self._dead[token_id] = REVOKED

    def poll(self) -> None:
        """Mark every watched token that is now revoked or expired."""
        with self._lock:
            watched = [t for t in self._open if t not in self._dead]
        now = utcnow()
        for start in range(0, len(watched), BATCH):
            batch = watched[start : start + BATCH]
            with self.db.read() as s:
                rows = {
                    row.id: row
                    for row in s.execute(
                        select(ApiToken.id, ApiToken.revoked_at, ApiToken.expires_at).where(
                            ApiToken.id.in_(batch)
                        )
                    )
                }
            with self._lock:
                for token_id in batch:
                    row = rows.get(token_id)
                    verdict = _verdict(row.revoked_at, row.expires_at, now) if row else REVOKED
                    if verdict is not None and token_id in self._open:
                        self._dead[token_id] = verdict

    def _run(self) -> None:
        event = threading.Event()
        while True:
            event.wait(self.interval())
            with self._lock:
                if not self._open:
                    self._thread = None  # the next open() starts another
                    return
            try:
                self.poll()
            except Exception:
                log.exception("could not poll token revocations; retrying")


def _verdict(
    revoked_at: datetime | None, expires_at: datetime | None, now: datetime
) -> tuple[str, str] | None:
    if revoked_at is not None:
        return REVOKED
    expiry = aware(expires_at)
    return EXPIRED if expiry is not None and expiry <= now else None

"""End open streams soon after their token is revoked or expires, with one poller per process.

A stream opened with a token registers it here; while any is registered, one task of the
engine's loop asks the database every TOKEN_POLL_SECONDS which of those tokens became
unusable (one query for all of them, whichever process revoked them). Streams check
`dead()` (a dict lookup) whenever they wake, so no stream ever queries the database for
this. `open`, `close` and `dead` run in the loop; `revoked_here` in a view's thread.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime
from functools import partial
from typing import Any

from sqlalchemy import select

from models import ApiToken
from models.base import utcnow
from models.db import Database
from services.api_tokens import aware

log = logging.getLogger(__name__)
# Ids per query: well under every database's limit on bound parameters.
BATCH = 500
REVOKED = ("token_revoked", "The API token was revoked.")
EXPIRED = ("token_expired", "The API token has expired.")


class TokenWatcher:
    """The tokens of this process's open streams, and which of them are no longer usable."""

    def __init__(
        self,
        db: Database,
        interval: float,
        blocking: Callable[[Callable[[], Any]], Awaitable[Any]],
    ) -> None:
        # `blocking` runs a database call away from the loop (the engine's store pool).
        self.db, self.interval, self.blocking = db, interval, blocking
        self._open: dict[int, int] = {}
        self._dead: dict[int, tuple[str, str]] = {}
        self._task: asyncio.Task[None] | None = None

    def open(self, token_id: int) -> None:
        """A stream authenticated by `token_id` starts; watch the token while it runs."""
        self._open[token_id] = self._open.get(token_id, 0) + 1
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run())

    def close(self, token_id: int) -> None:
        """A stream of `token_id` ended."""
        left = self._open.get(token_id, 0) - 1
        if left > 0:
            self._open[token_id] = left
        else:
            self._open.pop(token_id, None)
            self._dead.pop(token_id, None)

    def guard(self, token_id: int) -> TokenGuard:
        """What ends a stream authorised by `token_id` once the token stops working."""
        return TokenGuard(self, token_id)

    def dead(self, token_id: int) -> tuple[str, str] | None:
        """(code, message) once the token is revoked or expired, else None."""
        return self._dead.get(token_id)

    def revoked_here(self, token_id: int) -> None:
        """This process revoked the token: its streams here need not wait for the poll."""
        if token_id in self._open:
            self._dead[token_id] = REVOKED

    def poll(self, watched: list[int]) -> dict[int, tuple[str, str]]:
        """In a blocking thread: which of `watched` are now revoked or expired."""
        dead: dict[int, tuple[str, str]] = {}
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
            for token_id in batch:
                row = rows.get(token_id)
                verdict = _verdict(row.revoked_at, row.expires_at, now) if row else REVOKED
                if verdict is not None:
                    dead[token_id] = verdict
        return dead

    async def _run(self) -> None:
        failing = False
        while self._open:
            await asyncio.sleep(self.interval)
            watched = [t for t in self._open if t not in self._dead]
            if not watched:
                continue
            try:
                dead = await self.blocking(partial(self.poll, watched))
            except Exception as err:
                if not failing:
                    name = type(err).__name__
                    log.warning("could not poll token revocations (%s); retrying", name)
                failing = True
                continue
            failing = False
            for token_id, verdict in dead.items():
                if token_id in self._open:
                    self._dead[token_id] = verdict


class TokenGuard:
    """One stream's watch of its token (engine/events/follow.py's Guard)."""

    __slots__ = ("token_id", "watcher")

    def __init__(self, watcher: TokenWatcher, token_id: int) -> None:
        self.watcher, self.token_id = watcher, token_id

    def open(self) -> None:
        """The stream starts: watch its token."""
        self.watcher.open(self.token_id)

    def refusal(self) -> tuple[str, str] | None:
        """(code, message) once the token is revoked or expired."""
        return self.watcher.dead(self.token_id)

    def close(self) -> None:
        """The stream ended."""
        self.watcher.close(self.token_id)


def _verdict(
    revoked_at: datetime | None, expires_at: datetime | None, now: datetime
) -> tuple[str, str] | None:
    if revoked_at is not None:
        return REVOKED
    expiry = aware(expires_at)
    return EXPIRED if expiry is not None and expiry <= now else None

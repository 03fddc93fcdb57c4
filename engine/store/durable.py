"""The engine's way to the database: statements run in the store pool, outages are waited out.

A statement that fails because the database is unreachable or unwritable (models.db's
OUTAGE_ERRORS) changed nothing, so `durable` runs it again with jittered backoff until it
succeeds or `patience` runs out (OutageOutlasted). Every write it retries is written to
be run twice safely (an insert that finds its row, a finish that finds itself finished).
The store also remembers when it last failed: the reaper trusts no heartbeat that was
missed while the database itself was down.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Callable
from concurrent.futures import Executor
from contextvars import copy_context
from functools import partial
from typing import Any, TypeVar

from config import Timings
from domain.backoff import Backoff
from domain.errors import OutageOutlasted
from models.db import is_outage

T = TypeVar("T")
log = logging.getLogger(__name__)


class Store:
    """Runs blocking statements in the store pool; retries them through outages."""

    def __init__(self, pool: Executor, timings: Timings) -> None:
        self.pool, self.timings = pool, timings
        self._last_failure = time.monotonic()  # a worker trusts the store once it has seen it
        self._rng = random.Random()

    async def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run `fn` once in the store pool."""
        loop = asyncio.get_running_loop()
        try:
            # In the caller's context: a turn's statements are traced inside its span.
            call = partial(copy_context().run, fn, *args, **kwargs)
            return await loop.run_in_executor(self.pool, call)
        except Exception as err:
            if is_outage(err):
                self._last_failure = time.monotonic()
            raise

    async def durable(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run `fn`, retrying through an outage for up to STORE_OUTAGE_SECONDS."""
        return await self._retry(self.timings.store_outage, fn, *args, **kwargs)

    async def until_back(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run `fn`, retrying through an outage for as long as it lasts."""
        return await self._retry(None, fn, *args, **kwargs)

    async def _retry(
        self, patience: float | None, fn: Callable[..., T], *args: Any, **kwargs: Any
    ) -> T:
        t = self.timings
        backoff, started = Backoff(t.store_backoff_base, t.store_backoff_cap, self._rng), 0.0
        while True:
            try:
                return await self.call(fn, *args, **kwargs)
            except Exception as err:
                if not is_outage(err):
                    raise
                now = time.monotonic()
                if not started:
                    started = now
                    log.warning("the database is unreachable (%s); waiting", type(err).__name__)
                left = float("inf") if patience is None else started + patience - now
                if left <= 0:
                    raise OutageOutlasted() from err
                await asyncio.sleep(min(left, backoff.next()))

    def reachable_for(self) -> float:
        """Seconds since a statement last failed for an outage (or since this worker began)."""
        return time.monotonic() - self._last_failure

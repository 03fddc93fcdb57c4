"""Reading a turn's events: the live log first, then its archive, then a rebuild.

Reads never write. `check_store` lets an idle read look in the database for a turn whose
live log is gone (its worker died before the log was shared, or Redis lost the end);
readers pass it once idle for a while, so a busy stream never queries the database.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from concurrent.futures import Executor

from config import Timings
from engine.events.log import Chunk, EventLog, frames_after
from engine.events.replay import replay_turn
from engine.store.turns import TurnStore
from models.chat import TURN_RUNNING

log = logging.getLogger(__name__)


class EventReader:
    """Serves the events of any turn, from whichever place still has them."""

    def __init__(self, events: EventLog, turns: TurnStore, timings: Callable[[], Timings]) -> None:
        self.events, self.turns, self.timings = events, turns, timings

    async def aread(
        self,
        turn_id: str,
        after: int,
        timeout: float,
        check_store: bool = True,
        pool: Executor | None = None,
    ) -> Chunk:
        """`read` for a reader in the event loop: never blocks it (the database is asked
        in `pool`)."""
        aread = getattr(self.events, "aread", None)
        try:
            chunk = await aread(turn_id, after, timeout) if aread else None
        except Exception:
            log.exception("event log read failed for %s; using the database", turn_id)
            chunk = None
        if chunk is not None and (chunk.frames or chunk.finished or not check_store):
            return chunk
        loop = asyncio.get_running_loop()
        stored = await loop.run_in_executor(pool, self._stored, turn_id, after)
        if stored is not None:
            return stored
        if chunk is None:
            await asyncio.sleep(min(timeout, self.timings().idle_check))
        return chunk or Chunk(b"", after, False)

    def _stored(self, turn_id: str, after: int) -> Chunk | None:
        """A finished turn's events from storage; None while it runs (or is unknown)."""
        status, archive = self.turns.stored_turn(turn_id)
        if archive is not None:
            frames, last = frames_after(archive, after)
            return Chunk(frames, last, True)
        if status is None or status == TURN_RUNNING:
            return None
        # Finished without an archive: a turn stored before archives came with the end.
        return replay_turn(self.turns.db, turn_id, after)

    def read(self, turn_id: str, after: int, timeout: float, check_store: bool = True) -> Chunk:
        """Return events after `after`: live from the log, else archived, else rebuilt.

        Reads never write. `check_store` lets an idle read look in the database for a turn
        whose live log is gone (its worker died before the log was shared, or Redis lost
        the end); readers pass it once idle for a while, so a busy stream never queries it.
        """
        try:
            chunk = self.events.read(turn_id, after, timeout)
        except Exception:
            log.exception("event log read failed for %s; using the database", turn_id)
            chunk = None
        if chunk is not None and (chunk.frames or chunk.finished or not check_store):
            return chunk
        stored = self._stored(turn_id, after)
        if stored is not None:
            return stored
        if chunk is None:
            # Run by a worker whose log we cannot see (or being taken over): poll.
            time.sleep(min(timeout, self.timings().idle_check))
        return chunk or Chunk(b"", after, False)

"""Reading a turn's events: the live log first, then the archive the turn's end stored.

Reads never write. `check_store` lets an idle read look in the database for a turn whose
live log is gone (its worker died before the log was shared, or Redis lost the end);
readers pass it once idle for a while, so a busy stream never queries the database. An
unreachable log or database reads as "nothing yet": the reader keeps waiting.
"""

from __future__ import annotations

import asyncio
import logging

from config import Timings
from engine.events.log import Chunk, EventLog, frames_after
from engine.events.replay import replay_turn
from engine.store.durable import Store
from engine.store.turns import TurnStore
from models.chat import TURN_FINAL_STATUSES

log = logging.getLogger(__name__)


class EventReader:
    """Serves the events of any turn, from whichever place still has them."""

    def __init__(self, events: EventLog, turns: TurnStore, store: Store, timings: Timings) -> None:
        self.events, self.turns, self.store, self.timings = events, turns, store, timings

    async def read(self, turn_id: str, after: int, timeout: float, check_store: bool) -> Chunk:
        """Return events after `after`: live from the log, else archived, else rebuilt."""
        try:
            chunk = await self.events.read(turn_id, after, timeout)
        except Exception as err:
            log.warning("event log read failed for %s (%s); asking the database", turn_id, err)
            chunk = None
        if chunk is not None and (chunk.frames or chunk.finished or not check_store):
            return chunk
        try:
            stored = await self.store.call(self._stored, turn_id, after)
        except Exception as err:
            log.warning("the database cannot say where turn %s is (%s)", turn_id, err)
            stored = None
        if stored is not None:
            return stored
        if chunk is None:
            # Run by a worker whose log we cannot see (or being taken over): poll.
            await asyncio.sleep(min(timeout, self.timings.idle_check))
        return chunk or Chunk(b"", after, False)

    def _stored(self, turn_id: str, after: int) -> Chunk | None:
        """In the store pool: a finished turn's events; None until it ends (or is unknown)."""
        status, archive = self.turns.stored_turn(turn_id)
        if archive is not None:
            frames, last = frames_after(archive, after)
            return Chunk(frames, last, True)
        if status not in TURN_FINAL_STATUSES:
            return None  # unknown, queued or running
        # Finished without an archive: a turn stored before archives came with the end.
        return replay_turn(self.turns.db, turn_id, after)

"""A turn's output in order: each row is stored before the events that show it are sent.

The model stream never waits for the database: writes and events are queued in the order
they were made, and a drain task stores each write (through an outage, for as long as
STORE_OUTAGE_SECONDS allows) before it appends the events queued behind it. While nothing
is queued an event goes straight to the log, so a text delta costs no queue and no task.
Through an outage the client's stream pauses and the model's output waits here, in memory;
when the database is back, everything goes out in order.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import Any

from engine.events.log import EventLog
from engine.store.durable import Store
from engine.store.fence import Lease
from streaming.wire.events import Event

Write = Callable[[], Any]


class Outbox:
    """Orders one turn's writes and events; only the turn's own task feeds it."""

    def __init__(self, events: EventLog, store: Store, lease: Lease) -> None:
        self.events, self.store, self.lease = events, store, lease
        self._queue: deque[Write | Event] = deque()
        self._drain: asyncio.Task[None] | None = None
        self._failure: BaseException | None = None
        self.emitted = 0  # events appended to the log by this outbox

    def emit(self, event: Event) -> None:
        """Send an event now, or after the writes queued before it."""
        if self._queue:
            self._queue.append(event)
            return
        self.events.append(self.lease.turn_id, event[0], event[1], self.lease.number)
        self.emitted += 1

    def write(self, write: Write) -> None:
        """Store a row before any event emitted after this call is sent."""
        self._queue.append(write)
        if self._drain is None and self._failure is None:
            self._drain = asyncio.get_running_loop().create_task(self._run())

    async def settled(self) -> None:
        """Wait until everything queued is stored and sent; raise what stopped that."""
        if self._drain is not None:
            # Shielded: a cancelled turn stops waiting, but a write under way completes.
            await asyncio.shield(self._drain)
        if self._failure is not None:
            raise self._failure

    def drop(self) -> None:
        """Forget what could not be stored: none of it was shown."""
        self._queue.clear()

    async def _run(self) -> None:
        try:
            queue, lease = self._queue, self.lease
            while queue:
                item = queue[0]
                if callable(item):
                    await self.store.durable(item)
                else:
                    self.events.append(lease.turn_id, item[0], item[1], lease.number)
                    self.emitted += 1
                queue.popleft()
        except BaseException as err:  # LeaseLost, StorageUnavailable, a failing statement
            self._failure = err
        finally:
            self._drain = None

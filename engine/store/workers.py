"""Worker rows: one per server process, whose heartbeat keeps all of its turns alive."""

from __future__ import annotations

import os
import socket
import uuid
from datetime import timedelta

from sqlalchemy import delete, insert, select, update

from engine.store.core import rowcount
from engine.store.fence import db_now, now_value
from models import Turn, Worker
from models.chat import TURN_RUNNING
from models.db import Database


class WorkerRegistry:
    """Registers this process, beats its heartbeat (one statement for all of its turns)."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.worker_id = f"wrk_{uuid.uuid4().hex[:24]}"

    def register(self) -> None:
        """Insert this worker's row (again, if a long pause made another worker remove it)."""
        with self.db.transaction() as s:
            s.execute(
                insert(Worker).values(
                    id=self.worker_id,
                    host=socket.gethostname()[:200],
                    pid=os.getpid(),
                    heartbeat_at=now_value(s),
                )
            )

    def beat(self) -> None:
        """Refresh the heartbeat of this worker and so of every turn it runs."""
        with self.db.transaction() as s:
            found = rowcount(
                s.execute(
                    update(Worker)
                    .where(Worker.id == self.worker_id)
                    .values(heartbeat_at=now_value(s))
                )
            )
        if not found:
            self.register()

    def retire(self) -> None:
        """Remove this worker's row at a clean shutdown (its turns were handed over)."""
        with self.db.transaction() as s:
            s.execute(delete(Worker).where(Worker.id == self.worker_id))

    def forget_dead(self, older_than: float) -> int:
        """Delete rows of workers silent for `older_than` seconds that own no running turn."""
        with self.db.transaction() as s:
            cutoff = db_now(s) - timedelta(seconds=older_than)
            busy = select(Turn.worker_id).where(
                Turn.status == TURN_RUNNING, Turn.worker_id.is_not(None)
            )
            return (
                rowcount(
                    s.execute(
                        delete(Worker).where(Worker.heartbeat_at < cutoff, Worker.id.not_in(busy))
                    )
                )
                or 0
            )

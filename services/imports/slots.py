"""A user's upload places, held in the database: they count across every worker process.

A running upload holds one of its user's IMPORT_CONCURRENCY places, a row of `import_slots`
(user, slot 0 .. N-1) that it inserts when it is admitted and deletes when it ends. The
primary key refuses a place another upload holds, whichever worker runs it; the user's row
is locked meanwhile on PostgreSQL (as a turn's start locks it, engine/limits.py), and SQLite's
BEGIN IMMEDIATE serializes every writer. A place is held for `lease` seconds (the read's wall
limit and `import_slot_margin`), renewed once when the file is read: a row past its expiry
lost its worker (killed) and is taken over. One short transaction each; no Redis.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import cast

from sqlalchemy import Table, delete, exc, insert, select, update

from engine.limits import Admission
from models import ImportSlot, utcnow
from models.db import OUTAGE_ERRORS, Database

log = logging.getLogger(__name__)
SLOTS = cast(Table, ImportSlot.__table__)
# A place taken meanwhile by another process: asked again this many times (each conflict
# means a place was taken, so after `places` of them every one is).
CONFLICTS = 3
HOST = socket.gethostname()[:40]


@dataclass(frozen=True)
class Held:
    """A place an upload holds: the user's, which slot, and the holder that took it."""

    user_id: int
    slot: int
    holder: str


class UploadSlots:
    """Takes, renews and gives back the users' upload places in the database."""

    def __init__(
        self,
        db: Database,
        places: int,
        lease: float,
        now: Callable[[], datetime] = utcnow,
    ) -> None:
        self.db, self.places, self.now = db, places, now
        self.lease = timedelta(seconds=lease)

    def take(self, user_id: int) -> Held | None:
        """One of the user's free places (a lapsed one taken over), or None when all are held.
        An outage raises (the caller's 503); nothing is written then."""
        holder = f"{HOST}:{os.getpid()}:{secrets.token_hex(6)}"
        for attempt in range(self.places + CONFLICTS):
            try:
                return self._take(user_id, holder)
            except exc.IntegrityError:
                # Another process took the place between our look and our insert.
                if attempt + 1 >= self.places + CONFLICTS:
                    raise
        return None  # pragma: no cover (the loop returns or raises)

    def _take(self, user_id: int, holder: str) -> Held | None:
        now = self.now()
        c = SLOTS.c
        with self.db.begin() as conn:
            Admission.lock(conn, user_id)
            conn.execute(delete(SLOTS).where(c.user_id == user_id, c.expires_at <= now))
            taken = set(conn.scalars(select(c.slot).where(c.user_id == user_id)))
            if len(taken) >= self.places:
                return None
            slot = min(set(range(self.places)) - taken)
            conn.execute(
                insert(SLOTS).values(
                    user_id=user_id, slot=slot, holder=holder, expires_at=now + self.lease
                )
            )
        return Held(user_id, slot, holder)

    def renew(self, held: Held) -> None:
        """Hold the place `lease` more seconds (once its file is read); an outage leaves it
        to lapse at its first expiry."""
        c = SLOTS.c
        try:
            with self.db.begin() as conn:
                conn.execute(
                    update(SLOTS)
                    .where(c.user_id == held.user_id, c.slot == held.slot, c.holder == held.holder)
                    .values(expires_at=self.now() + self.lease)
                )
        except OUTAGE_ERRORS as err:
            log.warning("an upload place was not renewed: %s", type(err).__name__)

    def give_back(self, held: Held) -> None:
        """Free the place (if it is still this upload's); through an outage it lapses."""
        c = SLOTS.c
        try:
            with self.db.begin() as conn:
                conn.execute(
                    delete(SLOTS).where(
                        c.user_id == held.user_id, c.slot == held.slot, c.holder == held.holder
                    )
                )
        except OUTAGE_ERRORS as err:
            log.warning("an upload place was not given back: %s", type(err).__name__)

    def held(self, user_id: int) -> int:
        """How many of the user's places are held now (lapsed ones not counted)."""
        c = SLOTS.c
        with self.db.begin_read() as conn:
            found = conn.scalars(
                select(c.slot).where(c.user_id == user_id, c.expires_at > self.now())
            )
            return len(list(found))

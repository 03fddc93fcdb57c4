"""Leases that fence a turn's writes, and the database clock that judges heartbeats."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, bindparam, func, select
from sqlalchemy.orm import Session

from domain.errors import LeaseLost
from models import Turn, utcnow
from models.chat import TURN_RUNNING


@dataclass(frozen=True, slots=True)
class Lease:
    """The right to write one running turn; a takeover increments `number`."""

    turn_id: str
    session_id: str
    number: int


_TURN = Turn.__table__.c
# Built once: a statement's construction costs more CPU than running it on SQLite.
_HOLD = (
    select(_TURN.id)
    .where(
        _TURN.id == bindparam("_turn"),
        _TURN.lease == bindparam("_lease"),
        _TURN.status == TURN_RUNNING,
    )
    .with_for_update(read=True)
)


# The same test as a condition of a write: one statement instead of a SELECT before it.
# A write that matches no row then calls `hold` to tell a lost lease from a missing row.
HELD = _HOLD.exists()


def held_params(lease: Lease) -> dict[str, Any]:
    """The bind parameters of HELD (and of `hold`)."""
    return {"_turn": lease.turn_id, "_lease": lease.number}


def hold(conn: Connection, lease: Lease) -> None:
    """Inside a write transaction: raise LeaseLost unless `lease` is current.

    The turn row is share-locked until commit, so a takeover (which updates the row) waits
    for this write to finish and every later write with the old lease fails. SQLite needs
    no lock: its write transactions are serialized (BEGIN IMMEDIATE).
    """
    if conn.execute(_HOLD, held_params(lease)).first() is None:
        raise LeaseLost(lease.turn_id)


def db_now(s: Session) -> datetime:
    """The database's current time, so hosts with skewed clocks judge heartbeats alike."""
    if s.get_bind().dialect.name == "sqlite":
        return utcnow()  # SQLite is local: its clock is this host's, at full resolution
    return s.execute(select(func.now())).scalar_one()


def now_value(s: Session) -> Any:
    """A value or SQL expression for 'now' by the database's clock, to store in a row."""
    return utcnow() if s.get_bind().dialect.name == "sqlite" else func.now()

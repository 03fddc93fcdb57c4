"""Declarative base, id and time helpers shared by every model."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, DateTime, MetaData
from sqlalchemy.orm import DeclarativeBase

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    """Base class of every table."""

    metadata = MetaData(naming_convention=NAMING)
    type_annotation_map = {
        dict[str, Any]: JSON,
        list[dict[str, Any]]: JSON,
        datetime: DateTime(timezone=True),
    }


def utcnow() -> datetime:
    """Return the current time, timezone-aware in UTC."""
    return datetime.now(UTC)


def iso(moment: datetime | None) -> str | None:
    """Format a stored time as ISO 8601 in UTC (SQLite hands times back without a zone)."""
    if moment is None:
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).isoformat()


def any_of(column: str, values: tuple[str, ...]) -> str:
    """`column` is one of `values`, as equalities joined by OR: the CHECK of a table written
    a row at a time in bulk. SQLite checks `IN` a list of more than two values by building a
    temporary index of the list for every row written (several microseconds a row); the
    equalities it compares in turn. NULL passes either way."""
    return " OR ".join(f"{column} = {value!r}" for value in values)


def new_id(prefix: str) -> str:
    """Return a new random public id such as ``msg_3f9c...``."""
    return f"{prefix}_{uuid.uuid4().hex[:24]}"

"""What drafting, committing and undoing an import share: short transactions of BATCH rows,
each moving the import's progress, and how a step whose worker died is told from one running.

Each step runs in the request's own thread of the host's `http` pool (the view's hop), one
short database transaction per batch, so other users' writes wait at most one batch for
SQLite's write lock. The step's status (`drafting`, `committing`, `undoing`) and its progress
(`rows_done` of `rows_total`) are written with each batch, so another request reads them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

import psycopg
from sqlalchemy import Connection, Table, exc, update
from sqlalchemy.orm import Session

from domain.errors import Conflict
from models import StatementImport, utcnow
from models.imports import BUSY_STATUSES

# Rows written (or deleted) per short transaction.
BATCH = 2000
# A sum of a file's amounts is taken in SQL in two parts (billions and the rest) and added in
# Python, exactly: no sum can pass the database's 64 bits.
SPLIT = 1_000_000_000
# Told (rows done so far, rows in all) after each batch.
Progress = Callable[[int, int], None]
# What a row given to bulk_insert on SQLite holds for NULL in a nullable column: a float, which
# no column of ours holds (their values are integers and text, never equal to a float), turned
# back into NULL by the INSERT (NULLIF). The driver binds an int or a str as it is, but looks a
# None, a date or a bool up among its adapters first, about a microsecond each (the lookup
# formats an AttributeError it then drops): a third of an import row's insert.
SQLITE_NULL = 0.5


@dataclass(frozen=True, slots=True)
class Plain:
    """What a row given to bulk_insert holds for NULL, a day and a flag, on the database at
    hand: on SQLite values the driver binds without an adapter (SQLITE_NULL, the day's ISO
    text as SQLAlchemy stores a Date there, 1 and 0); on PostgreSQL the values themselves."""

    null: Any = None
    day: Callable[[date], Any] = lambda day: day
    true: Any = True
    false: Any = False

    @classmethod
    def of(cls, url: str) -> Plain:
        """The values for the database at `url`."""
        if url.startswith("sqlite"):
            return cls(SQLITE_NULL, date.isoformat, 1, 0)
        return cls()


def stalled(item: StatementImport, stall: float, now: datetime | None = None) -> bool:
    """True when `item` is drafting, committing or undoing and wrote no batch for `stall`
    seconds: its worker is gone, and the user may resume or undo it."""
    if item.status not in BUSY_STATUSES:
        return False
    moved = item.moved_at or item.created_at
    if moved.tzinfo is None:
        moved = moved.replace(tzinfo=UTC)
    return (now or utcnow()) - moved > timedelta(seconds=stall)


def busy(item: StatementImport, stall: float) -> Conflict:
    """409 `import_busy`: the import is being drafted, committed or undone by a request."""
    return Conflict(
        f"This import is {item.status} ({item.rows_done} of {item.rows_total} rows); "
        "try again when it is done.",
        code="import_busy",
        details={"status": item.status, "done": item.rows_done, "total": item.rows_total},
    )


def moved(s: Session, import_id: int, done: int, **values: Any) -> None:
    """Record `done` rows of the step under way (and other columns) in the batch's transaction."""
    s.execute(
        update(StatementImport)
        .where(StatementImport.id == import_id)
        .values(rows_done=done, moved_at=utcnow(), **values)
    )


def bulk_insert(
    s: Session, table: Table, columns: Sequence[str], rows: list[tuple[Any, ...]]
) -> None:
    """Insert `rows` (tuples of the values of `columns`, in order): on SQLite with one
    executemany of the driver (SQLAlchemy's own path builds the parameters of each row again,
    which costs more than the insert), on PostgreSQL (psycopg) with one COPY, whose rows
    psycopg writes in C where its executemany spends tens of microseconds of Python a row.
    The values must be ones the driver takes as they are (int, str, bool, date, None); on
    SQLite SQLITE_NULL is NULL in a nullable column, and `Plain` gives the values it binds
    fastest. A driver's error is raised as SQLAlchemy raises it (DataError, ...)."""
    if not rows:
        return
    conn = s.connection()
    names = ", ".join(columns)
    if conn.dialect.name == "postgresql" and conn.dialect.driver == "psycopg":
        _copy(conn, f"COPY {table.name} ({names}) FROM STDIN", rows)
        return
    if conn.dialect.name == "sqlite":
        nullable = {c.name for c in table.columns if c.nullable}
        marks = ", ".join(f"NULLIF(?, {SQLITE_NULL})" if c in nullable else "?" for c in columns)
    else:
        marks = ", ".join("%s" for _ in columns)
    conn.exec_driver_sql(f"INSERT INTO {table.name} ({names}) VALUES ({marks})", rows)  # type: ignore[arg-type]


def _copy(conn: Connection, statement: str, rows: list[tuple[Any, ...]]) -> None:
    """COPY `rows` in on the connection's psycopg connection, in its transaction."""
    driver = conn.connection.driver_connection
    assert isinstance(driver, psycopg.Connection)
    try:
        with driver.cursor() as cursor, cursor.copy(statement) as copy:
            for row in rows:
                copy.write_row(row)
    except psycopg.Error as err:
        raise exc.DBAPIError.instance(statement, None, err, psycopg.Error) from err

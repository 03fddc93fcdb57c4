"""Engine and short-lived transactions; nothing else holds a connection."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event, exc
from sqlalchemy.orm import Session, sessionmaker

from config import Timings
from models import deadlines

# What an unreachable or unwritable database raises (refused or dropped connections, a full
# disk, a read-only or locked file, an exhausted pool, a deadline of models/deadlines.py, a
# statement or lock timeout): a statement that failed so changed nothing, and may succeed
# once the database is back.
OUTAGE_ERRORS = (
    exc.OperationalError,
    exc.InterfaceError,
    exc.DisconnectionError,
    exc.TimeoutError,
)


def is_outage(err: BaseException) -> bool:
    """True if `err` says the database is unreachable or unwritable, not that a query is wrong."""
    return isinstance(err, OUTAGE_ERRORS)


def is_bad_value(err: BaseException) -> bool:
    """True if `err` is the database (or its driver) refusing a value a statement carried: a
    NUL in a PostgreSQL string, a number out of range, text that is not valid Unicode."""
    if isinstance(err, exc.DataError):
        return True
    return isinstance(err, UnicodeEncodeError) and err.reason == "surrogates not allowed"


class Database:
    """One engine per app; `transaction()` yields a session committed on exit.

    The turn engine's hot writes use `begin()`, a bare connection: Core statements built
    once skip the ORM's per-call work (about a quarter of the CPU of a short write).
    """

    def __init__(self, url: str, timings: Timings | None = None) -> None:
        timings = timings or Timings()
        self.url = url
        self.timings = timings
        self.engine = make_engine(url, timings)
        # SQLite takes one writer at a time; others wait in its busy handler, which sleeps
        # in growing steps (up to 100 ms). Queue this process's writers on a lock instead.
        self._writers: AbstractContextManager[Any] = (
            WriterQueue(timings.store_lock)
            if url.startswith("sqlite")
            else contextlib.nullcontext()
        )
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        self._read_engine = self.engine.execution_options(read_only=True)
        self._readers = sessionmaker(self._read_engine, expire_on_commit=False)

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """Run a block in one transaction: commit on success, roll back on error."""
        with self._writers, self._sessions.begin() as session:
            yield session

    @contextmanager
    def read(self) -> Iterator[Session]:
        """Run a read-only block; on SQLite it does not take the write lock."""
        with self._readers.begin() as session:
            yield session

    @contextmanager
    def begin(self) -> Iterator[Connection]:
        """Run Core statements in one write transaction: commit on success, else roll back."""
        with self._writers, self.engine.begin() as conn:
            yield conn

    @contextmanager
    def begin_read(self) -> Iterator[Connection]:
        """Run Core statements in one read-only transaction (no write lock on SQLite)."""
        with self._read_engine.begin() as conn:
            yield conn

    def dispose(self) -> None:
        """Close every pooled connection."""
        self.engine.dispose()


class WriterQueue:
    """This process's SQLite writers, one at a time; each waits at most `patience` seconds
    for its turn, then fails as an outage (503 for a request; the engine retries)."""

    def __init__(self, patience: float) -> None:
        self.patience = patience
        self._lock = threading.Lock()

    def __enter__(self) -> None:
        if not self._lock.acquire(timeout=self.patience):
            raise exc.TimeoutError(f"the database stayed locked for {self.patience:g} s")

    def __exit__(self, *_: object) -> None:
        self._lock.release()


def make_engine(url: str, timings: Timings | None = None) -> Engine:
    """Create an engine whose every wait is bounded (see models/deadlines.py); SQLite gets
    WAL, a busy timeout and enforced foreign keys."""
    timings = timings or Timings()
    # A request or a statement of the engine waits this long for a pooled connection.
    pool = {"pool_size": 10, "max_overflow": 20, "pool_timeout": timings.store_checkout}
    if not url.startswith("sqlite"):
        engine = create_engine(
            url, pool_pre_ping=True, connect_args=deadlines.connect_args(timings), **pool
        )
        if engine.dialect.driver == "psycopg":
            answering = deadlines.answering_connection(timings)

            @event.listens_for(engine, "do_connect")
            def _connect(_dialect, _record, cargs, cparams):  # type: ignore[no-untyped-def]
                return answering.connect(*cargs, **cparams)

        return engine
    # Waiting for another process's write lock: as long as for this process's writers.
    busy_timeout = timings.store_lock
    connect_args = {"check_same_thread": False, "timeout": busy_timeout}
    engine = create_engine(url, connect_args=connect_args, **pool)

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_conn, _record) -> None:  # type: ignore[no-untyped-def]
        # Let SQLAlchemy emit BEGIN itself (see _begin) instead of pysqlite.
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute(f"PRAGMA busy_timeout={int(busy_timeout * 1000)}")
        cur.close()

    @event.listens_for(engine, "begin")
    def _begin(conn) -> None:  # type: ignore[no-untyped-def]
        # IMMEDIATE takes the write lock up front: a deferred transaction that
        # reads and then writes can fail with SQLITE_BUSY under concurrent turns.
        read_only = conn.get_execution_options().get("read_only", False)
        # Straight to the driver: SQLAlchemy's execution path around a bare BEGIN cost more
        # than the statements of most transactions.
        begin = "BEGIN" if read_only else "BEGIN IMMEDIATE"
        try:
            conn.connection.driver_connection.execute(begin)
        except sqlite3.OperationalError as err:
            # Locked past the busy timeout, or unwritable: an outage, as SQLAlchemy wraps it.
            raise exc.OperationalError(begin, None, err) from err

    return engine

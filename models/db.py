"""Engine and short-lived transactions; nothing else holds a connection."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker


class Database:
    """One engine per app; `transaction()` yields a session committed on exit."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = make_engine(url)
        # SQLite takes one writer at a time; others wait in its busy handler, which sleeps
        # in growing steps (up to 100 ms). Queue this process's writers on a lock instead.
        self._writers = threading.Lock() if url.startswith("sqlite") else contextlib.nullcontext()
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        self._readers = sessionmaker(
            self.engine.execution_options(read_only=True), expire_on_commit=False
        )

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

    def dispose(self) -> None:
        """Close every pooled connection."""
        self.engine.dispose()


def make_engine(url: str) -> Engine:
    """Create an engine; SQLite gets WAL, a busy timeout and enforced foreign keys."""
    if not url.startswith("sqlite"):
        return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20)
    engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_conn, _record) -> None:  # type: ignore[no-untyped-def]
        # Let SQLAlchemy emit BEGIN itself (see _begin) instead of pysqlite.
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute("PRAGMA busy_timeout=30000")
        cur.close()

    @event.listens_for(engine, "begin")
    def _begin(conn) -> None:  # type: ignore[no-untyped-def]
        # IMMEDIATE takes the write lock up front: a deferred transaction that
        # reads and then writes can fail with SQLITE_BUSY under concurrent turns.
        read_only = conn.get_execution_options().get("read_only", False)
        conn.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")

    return engine

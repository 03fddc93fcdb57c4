"""Uploaded statement files read in reader processes, within the limits the settings give.

`StatementReader` is one per app (`app.extensions["statement_reader"]`): it admits at most
IMPORT_PROCESS_CONCURRENCY uploads at once in this process and IMPORT_CONCURRENCY per user
across every worker process sharing the database (its places, services/imports/slots.py),
429 beyond, and reads each file through `statements.isolated.read_isolated`: a child
process forked from the zygote, limited to IMPORT_READ_CPU_SECONDS, IMPORT_READ_MEMORY_MIB
and IMPORT_READ_WALL_SECONDS. The view's `http` thread only waits for the child's answer:
the child reads the file where the upload was spooled as it arrived (a file given as bytes,
by the CLI or a test, is written to a temporary file first).

`read_untrusted` is what `create_draft` calls: the reader (and the client's presence) of the
upload admitted in this context, else the app's reader, else one with the default limits
(the CLI outside an app).
"""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

from flask import current_app, has_app_context

from config import Settings
from domain.errors import LimitExceeded
from models.db import Database
from services.imports.slots import UploadSlots
from statements.isolated import Reader, ReadLimits, read_isolated
from statements.parsed import ParsedFile
from statements.read import ReadOptions, read_statement

# Whether the client of the upload being served is gone (None: the host cannot tell).
Gone = Callable[[], bool] | None


@dataclass(frozen=True)
class _Admitted:
    reader: StatementReader
    gone: Gone
    # Holds the upload's place `lease` more seconds, once its file is read.
    renew: Callable[[], None]


_ADMITTED: ContextVar[_Admitted | None] = ContextVar("statement_upload", default=None)


class StatementReader:
    """Reads uploaded files in reader processes: bounded per user (across processes, when
    it has `slots`) and per process."""

    def __init__(
        self,
        limits: ReadLimits,
        total: int,
        retry_after: float,
        slots: UploadSlots | None = None,
        reader: Reader = read_statement,
    ) -> None:
        self.limits, self.total, self.slots = limits, total, slots
        self.retry_after = retry_after
        # What the reader process runs on the file's bytes (tests name a reader gone wrong).
        self.reader = reader
        self._lock = threading.Lock()
        self._running = 0

    @classmethod
    def of(cls, settings: Settings, db: Database | None = None) -> StatementReader:
        """The reader the settings describe; with `db`, its users' places are kept there."""
        timings = settings.timings
        limits = ReadLimits(
            cpu_seconds=settings.import_read_cpu_seconds,
            memory_bytes=settings.import_read_memory_mib * 1024 * 1024,
            wall_seconds=timings.import_read_wall,
        )
        lease = timings.import_read_wall + timings.import_slot_margin
        slots = UploadSlots(db, settings.import_concurrency, lease) if db else None
        return cls(limits, settings.import_process_concurrency, timings.import_retry_after, slots)

    def busy(self, limit: int) -> LimitExceeded:
        """429 `import_busy`: `limit` uploads run already."""
        return LimitExceeded(
            "import_busy",
            "Too many statement files are being imported; retry in a moment.",
            self.retry_after,
            {"limit": limit},
        )

    @contextmanager
    def admit(self, user_id: int, gone: Gone = None) -> Iterator[None]:
        """Hold one of this process's upload places and one of the user's (429 `import_busy`
        at once when either is full; 503 when the database is down, nothing written); files
        read meanwhile in this context are read by this reader."""
        with self._lock:
            if self._running >= self.total:
                raise self.busy(self.total)
            self._running += 1
        try:
            held = self.slots.take(user_id) if self.slots else None
            if self.slots and held is None:
                raise self.busy(self.slots.places)
            slots = self.slots
            renew = (lambda: slots.renew(held)) if slots and held else _nothing
            token = _ADMITTED.set(_Admitted(self, gone, renew))
            try:
                yield
            finally:
                _ADMITTED.reset(token)
                if slots and held:
                    slots.give_back(held)
        finally:
            with self._lock:
                self._running -= 1

    def running(self) -> int:
        """Uploads admitted and not yet done, in this process."""
        with self._lock:
            return self._running

    def read(
        self, source: bytes | Path, filename: str, options: ReadOptions, gone: Gone = None
    ) -> ParsedFile:
        """Parse the file at `source` (or its bytes, through a temporary file always removed)
        in a reader process."""
        if isinstance(source, Path):
            return read_isolated(str(source), filename, options, self.limits, gone, self.reader)
        handle, path = tempfile.mkstemp(prefix="statement-", suffix=".upload")
        try:
            with os.fdopen(handle, "wb") as file:
                file.write(source)
            return read_isolated(path, filename, options, self.limits, gone, self.reader)
        finally:
            os.unlink(path)


def _nothing() -> None:
    """No place to renew."""


def read_untrusted(source: bytes | Path, filename: str, options: ReadOptions) -> ParsedFile:
    """Parse an uploaded file (its path, or its bytes) in a reader process, never in this one."""
    admitted = _ADMITTED.get()
    if admitted is not None:
        parsed = admitted.reader.read(source, filename, options, admitted.gone)
        admitted.renew()  # its rows are stored next
        return parsed
    if has_app_context():
        found = current_app.extensions.get("statement_reader")
        if isinstance(found, StatementReader):
            return found.read(source, filename, options)
    return StatementReader.of(Settings()).read(source, filename, options)

"""Uploaded statement files read in reader processes, within the limits the settings give.

`StatementReader` is one per app (`app.extensions["statement_reader"]`): it admits at most
IMPORT_CONCURRENCY uploads per user and IMPORT_PROCESS_CONCURRENCY in all in this process
(429 beyond), and reads each file through `statements.isolated.read_isolated`: a child
process forked from the zygote, limited to IMPORT_READ_CPU_SECONDS, IMPORT_READ_MEMORY_MIB
and IMPORT_READ_WALL_SECONDS. The view's `http` thread only writes the temporary file and
waits for the child's answer.

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

from flask import current_app, has_app_context

from config import Settings
from domain.errors import LimitExceeded
from statements.isolated import Reader, ReadLimits, read_isolated
from statements.parsed import ParsedFile
from statements.read import ReadOptions, read_statement

# Whether the client of the upload being served is gone (None: the host cannot tell).
Gone = Callable[[], bool] | None


@dataclass(frozen=True)
class _Admitted:
    reader: StatementReader
    gone: Gone


_ADMITTED: ContextVar[_Admitted | None] = ContextVar("statement_upload", default=None)


class StatementReader:
    """Reads uploaded files in reader processes: bounded per user and per process."""

    def __init__(
        self,
        limits: ReadLimits,
        per_user: int,
        total: int,
        retry_after: float,
        reader: Reader = read_statement,
    ) -> None:
        self.limits, self.per_user, self.total = limits, per_user, total
        self.retry_after = retry_after
        # What the reader process runs on the file's bytes (tests name a reader gone wrong).
        self.reader = reader
        self._lock = threading.Lock()
        self._running: dict[int, int] = {}

    @classmethod
    def of(cls, settings: Settings) -> StatementReader:
        """The reader the settings describe."""
        timings = settings.timings
        limits = ReadLimits(
            cpu_seconds=settings.import_read_cpu_seconds,
            memory_bytes=settings.import_read_memory_mib * 1024 * 1024,
            wall_seconds=timings.import_read_wall,
        )
        return cls(
            limits,
            settings.import_concurrency,
            settings.import_process_concurrency,
            timings.import_retry_after,
        )

    @contextmanager
    def admit(self, user_id: int, gone: Gone = None) -> Iterator[None]:
        """Hold one of the user's upload places (429 `import_busy` at once when none is
        free); files read meanwhile in this context are read by this reader."""
        with self._lock:
            mine = self._running.get(user_id, 0)
            if mine >= self.per_user or sum(self._running.values()) >= self.total:
                raise LimitExceeded(
                    "import_busy",
                    "Too many statement files are being imported; retry in a moment.",
                    self.retry_after,
                    {"limit": self.per_user if mine >= self.per_user else self.total},
                )
            self._running[user_id] = mine + 1
        token = _ADMITTED.set(_Admitted(self, gone))
        try:
            yield
        finally:
            _ADMITTED.reset(token)
            with self._lock:
                left = self._running[user_id] - 1
                if left:
                    self._running[user_id] = left
                else:
                    del self._running[user_id]

    def running(self) -> int:
        """Uploads admitted and not yet done, in this process."""
        with self._lock:
            return sum(self._running.values())

    def read(
        self, data: bytes, filename: str, options: ReadOptions, gone: Gone = None
    ) -> ParsedFile:
        """Parse `data` in a reader process (through a temporary file, always removed)."""
        handle, path = tempfile.mkstemp(prefix="statement-", suffix=".upload")
        try:
            with os.fdopen(handle, "wb") as file:
                file.write(data)
            return read_isolated(path, filename, options, self.limits, gone, self.reader)
        finally:
            os.unlink(path)


def read_untrusted(data: bytes, filename: str, options: ReadOptions) -> ParsedFile:
    """Parse an uploaded file in a reader process, never in this one."""
    admitted = _ADMITTED.get()
    if admitted is not None:
        return admitted.reader.read(data, filename, options, admitted.gone)
    if has_app_context():
        found = current_app.extensions.get("statement_reader")
        if isinstance(found, StatementReader):
            return found.read(data, filename, options)
    return StatementReader.of(Settings()).read(data, filename, options)

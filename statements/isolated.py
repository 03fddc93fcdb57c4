"""A statement file read in a process of its own, within CPU, memory and wall-clock limits.

Which process runs what:

- The caller (a web worker's `http` thread, or the CLI) writes nothing but the temporary
  file's path and the read options to a pipe, and waits on that pipe with the wall-clock
  deadline: it never parses the file.
- The zygote: multiprocessing's forkserver, started once per worker process on its first
  read (it imports `statements/` once: about a second), forks one child per read (about
  20 ms on an idle machine).
- The child (`_child`): lowers its priority (`os.nice`), sets RLIMIT_CPU (its allowance
  past the CPU it took to start) and RLIMIT_AS, reads the file in one pass (its rows handed
  to a RowSink as they are read, no second pass), and sends the statements back as plain
  data (their rows packed as they were read, CHUNK_ROWS rows a pickled chunk, no stream)
  with the CPU seconds it took, or the APIError the reader raised, or which limit it met.
  It is killed at the wall-clock deadline or when the caller's client is gone; the kernel
  ends it at the CPU limit (SIGXCPU), and an allocation past the memory limit fails in it
  (MemoryError). The child logs nothing: what the caller logs of a failed read is one line,
  without the file.

Whatever the child does, the caller gets the ParsedFile or an APIError: 415/422 as the reader
raised it, or 422 `reader_limit` (which limit: cpu, memory, time) or `reader_crashed`.
Nothing of the file's content is logged, here or in the child.
"""

from __future__ import annotations

import contextlib
import logging
import math
import multiprocessing
import os
import pickle
import resource
import signal
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import date
from functools import partial
from multiprocessing.connection import Connection
from typing import Any

from domain import errors
from domain.errors import APIError, BadRequest, Unprocessable
from domain.text import one_line
from statements.parsed import ParsedFile, ParsedRow, ParsedStatement
from statements.read import ReadOptions, read_statement

log = logging.getLogger(__name__)

# The module the zygote imports once, so that each child starts with it loaded.
PRELOAD = ["statements.zygote"]
# What reads a file's bytes (statements.read.read_statement; tests name others).
Reader = Callable[[bytes, str, ReadOptions], ParsedFile]
# How often a wait for the child also asks whether the client is still there.
GONE_POLL = 0.25
# Rows per pickled chunk the child packs as it reads: the caller holds a file's rows as these
# bytes (tens of bytes a row), and unpacks one chunk at a time as it stores them.
CHUNK_ROWS = 2000


@dataclass(frozen=True)
class ReadLimits:
    """What one read may spend: CPU seconds, address space, wall-clock seconds; and the
    niceness its process runs at (higher: web threads win the CPU)."""

    cpu_seconds: int = 10
    memory_bytes: int = 512 * 1024 * 1024
    wall_seconds: float = 15.0
    nice: int = 10


def reader_limit(limit: str, limits: ReadLimits) -> Unprocessable:
    """422 `reader_limit`: the read was stopped at `limit` (cpu, memory or time)."""
    said = {
        "cpu": f"it took more than {limits.cpu_seconds} seconds of CPU",
        "memory": f"it needed more than {limits.memory_bytes // (1024 * 1024)} MiB of memory",
        "time": f"it was not read within {limits.wall_seconds:g} seconds",
    }[limit]
    return Unprocessable(
        f"The file was not imported: {said}, and its reading was stopped.",
        code="reader_limit",
        details={"limit": limit},
    )


def reader_crashed() -> Unprocessable:
    """422 `reader_crashed`: the process reading the file ended without an answer."""
    return Unprocessable(
        "The file was not imported: the reader crashed on it.", code="reader_crashed"
    )


def read_isolated(
    path: str,
    filename: str,
    options: ReadOptions,
    limits: ReadLimits,
    gone: Callable[[], bool] | None = None,
    read: Reader = read_statement,
) -> ParsedFile:
    """Read the file at `path` with `read` (a module's function: it is named to the child)
    in a child process within `limits`; `gone()` true means the client left, and the child
    is killed. Runs in the caller's thread, which only waits."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)
    receive, send = context.Pipe(duplex=False)
    child = context.Process(
        target=_child, args=(send, path, filename, options, limits, read), daemon=True
    )
    try:
        child.start()
        send.close()
        answer = _wait(receive, child, limits, gone)
    finally:
        receive.close()
        if child.is_alive():
            child.kill()
        child.join()
        child.close()
    return _answered(answer, limits)


def _wait(
    receive: Connection,
    child: Any,
    limits: ReadLimits,
    gone: Callable[[], bool] | None,
) -> tuple[Any, ...]:
    """The child's answer, or what ended it: ("killed", limit) or ("exited", exitcode)."""
    deadline = time.monotonic() + limits.wall_seconds
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            child.kill()
            return ("killed", "time")
        if receive.poll(min(left, GONE_POLL) if gone is not None else left):
            try:
                answer: tuple[Any, ...] = receive.recv()
                return answer
            except (EOFError, OSError):
                child.join()
                return ("exited", child.exitcode)
        if gone is not None and gone():
            child.kill()
            raise BadRequest("The client left before its file was read.", code="client_gone")


def _answered(answer: tuple[Any, ...], limits: ReadLimits) -> ParsedFile:
    """The ParsedFile of an answer, or its error raised."""
    kind = answer[0]
    if kind == "ok":
        parsed = _rebuilt(answer[1])
        parsed.read_cpu = answer[2]
        return parsed
    if kind == "error":
        name, message, code, details = answer[1:]
        found = getattr(errors, name, None)
        cls = found if isinstance(found, type) and issubclass(found, APIError) else Unprocessable
        raise cls(message, code=code, details=details)
    if kind in ("limit", "killed"):
        raise reader_limit(answer[1], limits)
    if kind == "crashed":
        log.warning("a statement reader failed: %s", answer[1])
        raise reader_crashed()
    exitcode = answer[1]
    if exitcode in (-signal.SIGXCPU, -signal.SIGKILL):
        # SIGXCPU at the soft CPU limit; SIGKILL at the hard one (a second later).
        raise reader_limit("cpu", limits)
    log.warning("a statement reader ended without an answer (exit code %s)", exitcode)
    raise reader_crashed()


def _child(
    send: Connection,
    path: str,
    filename: str,
    options: ReadOptions,
    limits: ReadLimits,
    read: Reader,
) -> None:
    """In the child: limit itself, read the file, send back what came of it."""
    with contextlib.suppress(OSError):
        os.nice(limits.nice)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    # RLIMIT_CPU counts the process's CPU so far (what it took to unpickle its arguments and
    # import the reader's module), so the read's own allowance is added to that.
    started = resource.getrusage(resource.RUSAGE_SELF)
    cpu = math.ceil(started.ru_utime + started.ru_stime) + limits.cpu_seconds
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
    try:
        with open(path, "rb") as file:
            data = file.read()
        packed = Packed()
        flat = _flattened(read(data, filename, replace(options, sink=packed)), packed)
        used = resource.getrusage(resource.RUSAGE_SELF)
        answer: tuple[Any, ...] = ("ok", flat, used.ru_utime + used.ru_stime)
    except APIError as err:
        answer = ("error", type(err).__name__, err.message, err.code, err.details)
    except MemoryError:
        answer = ("limit", "memory")
    except Exception as err:
        # The exception's type and where it was raised, never its message (which may quote
        # the file); the caller logs it.
        where = traceback.extract_tb(err.__traceback__)[-1:]
        at = f"{where[0].filename}:{where[0].lineno}" if where else "?"
        answer = ("crashed", f"{type(err).__name__} at {at}")
    try:
        send.send(answer)
    except MemoryError:
        send.send(("limit", "memory"))
    send.close()


class Packed:
    """The RowSink of the child: each row packed as a plain tuple (its date as an ordinal,
    which pickles faster; its payee and purpose as one line of plain text, no control or bidi
    character) into chunks of CHUNK_ROWS rows pickled as they fill, statement by statement."""

    def __init__(self) -> None:
        self.rows: list[tuple[Any, ...]] = []
        self.chunks: list[bytes] = []
        # Each ended statement (by its id) with its chunks and its repeated bank ids.
        self.ended: dict[int, tuple[list[bytes], frozenset[str]]] = {}

    def row(self, r: ParsedRow) -> None:
        """Pack one row of the statement being read."""
        self.rows.append(
            (
                r.position,
                r.posted_on.toordinal() if r.posted_on is not None else None,
                r.amount_minor,
                one_line(r.merchant),
                one_line(r.description),
                r.bank_id,
                r.currency,
                r.reason,
            )
        )
        if len(self.rows) >= CHUNK_ROWS:
            self._pack()

    def end(self, statement: ParsedStatement, repeated: frozenset[str]) -> None:
        """The statement's rows are all packed."""
        if self.rows:
            self._pack()
        self.ended[id(statement)] = (self.chunks, repeated)
        self.chunks = []

    def _pack(self) -> None:
        self.chunks.append(pickle.dumps(self.rows, pickle.HIGHEST_PROTOCOL))
        self.rows = []


def _flattened(parsed: ParsedFile, packed: Packed) -> dict[str, Any]:
    """`parsed` as plain data: each statement with its rows' chunks and repeated bank ids, no
    stream. A reader that gave the sink no rows (one of the tests') has them read here."""
    statements = []
    for statement in parsed.statements:
        found = packed.ended.get(id(statement))
        if found is None:
            statement.streamed_span = statement.span()
            packed.rows, packed.chunks = [], []
            for row in statement.each():
                packed.row(row)
            packed.end(statement, frozenset())
            found = packed.ended[id(statement)]
        statement.stream, statement.rows = None, []
        statements.append((statement, *found))
    parsed.statements = []
    return {"file": parsed, "statements": statements}


def _rebuilt(flat: dict[str, Any]) -> ParsedFile:
    parsed: ParsedFile = flat["file"]
    for statement, chunks, repeated in flat["statements"]:
        statement.stream = partial(_unpacked, chunks, repeated)
        parsed.statements.append(statement)
    return parsed


def _unpacked(chunks: list[bytes], repeated: frozenset[str]) -> Iterator[ParsedRow]:
    """A statement's rows, a chunk unpacked at a time; a bank id its rows gave more than once
    is dropped (such rows are told apart by occurrence)."""
    day = date.fromordinal
    for chunk in chunks:
        for n, on, amount, merchant, description, bank_id, currency, reason in pickle.loads(chunk):
            if bank_id is not None and bank_id in repeated:
                bank_id = None
            yield ParsedRow(
                n,
                None if on is None else day(on),
                amount,
                merchant,
                description,
                bank_id,
                currency,
                reason,
            )

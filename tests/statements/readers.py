"""Readers that stand in for a reader gone wrong, for the reader-process tests.

A reader process imports the module of the reader it is given by name, before it sets its
limits; this module imports little, so that import costs the child next to nothing."""

from __future__ import annotations

import os
import resource
import signal
import time

from statements.parsed import ParsedFile
from statements.read import ReadOptions

# The CPU a process has used once `slow_start` is imported (in a reader process: before it
# reads), more than the tests' one-second limit.
STARTUP_CPU = 1.5


def burn(data: bytes, filename: str, options: ReadOptions) -> ParsedFile:
    """A reader that never ends, on the CPU."""
    while True:
        pass


def hoard(data: bytes, filename: str, options: ReadOptions) -> ParsedFile:
    """A reader that asks for more memory than it may have."""
    kept = [bytearray(64 * 1024 * 1024) for _ in range(64)]
    raise AssertionError(f"allocated {len(kept)} blocks")


def doze(data: bytes, filename: str, options: ReadOptions) -> ParsedFile:
    """A reader that waits, using no CPU."""
    time.sleep(600)
    raise AssertionError("woke up")


def crash(data: bytes, filename: str, options: ReadOptions) -> ParsedFile:
    """A reader that dies as a C library's bug would."""
    os.kill(os.getpid(), signal.SIGSEGV)
    raise AssertionError("survived")


def fail(data: bytes, filename: str, options: ReadOptions) -> ParsedFile:
    """A reader with a bug, whose message quotes the file."""
    raise ValueError(data.decode())


def cpu_used() -> float:
    """The CPU seconds this process has used."""
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime

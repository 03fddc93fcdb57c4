"""A reader whose module takes more CPU to import than a read may spend, as a reader module
with heavy imports does: importing it works until the process has used STARTUP_CPU seconds
(in a test process that has long used more, at once)."""

from __future__ import annotations

from statements.parsed import ParsedFile
from statements.read import ReadOptions
from tests.statements.readers import STARTUP_CPU, cpu_used

while cpu_used() < STARTUP_CPU:
    pass


def fail(data: bytes, filename: str, options: ReadOptions) -> ParsedFile:
    """A reader with a bug, in a module slow to import, that reads for a fifth of a second
    of CPU (a few of the kernel's ticks, at each of which it checks the CPU limit) first."""
    until = cpu_used() + 0.2
    while cpu_used() < until:
        pass
    raise ValueError("a bug")

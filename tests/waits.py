"""Waiting on a condition instead of sleeping: poll until it holds, fail after a patience."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

# How long a test waits for anything: generous for a loaded 2-core machine, never a measured
# figure (a test that waits this long has failed).
PATIENCE = 10.0


def wait_until(
    check: Callable[[], T],
    timeout: float = PATIENCE,
    message: str = "the condition never held",
    every: float = 0.01,
) -> T:
    """Poll `check` every `every` s until it returns something true, and return that; fail
    after `timeout` s. A check that asks a server over HTTP polls less often."""
    deadline = time.monotonic() + timeout
    while not (result := check()):
        assert time.monotonic() < deadline, message
        time.sleep(every)
    return result


async def wait_until_async(
    check: Callable[[], T],
    timeout: float = PATIENCE,
    message: str = "the condition never held",
    every: float = 0.01,
) -> T:
    """`wait_until` for a test running on an event loop: polls without blocking the loop."""
    deadline = time.monotonic() + timeout
    while not (result := check()):
        assert time.monotonic() < deadline, message
        await asyncio.sleep(every)
    return result

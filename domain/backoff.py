"""Jittered exponential backoff: the one schedule every retry loop follows."""

from __future__ import annotations

import random


def backoff_delay(base: float, cap: float, attempt: int, rng: random.Random) -> float:
    """Seconds to wait before retry `attempt` (0-based): base doubled per attempt up to `cap`,
    drawn from its upper half so that many waiters spread out."""
    return min(cap, base * 2.0**attempt) * rng.uniform(0.5, 1.0)


class Backoff:
    """The delays of one retry loop: `next()` after each failure, `reset()` after a success."""

    __slots__ = ("_attempt", "_rng", "base", "cap")

    def __init__(self, base: float, cap: float, rng: random.Random | None = None) -> None:
        self.base, self.cap = base, cap
        self._rng = rng or random.Random()
        self._attempt = 0

    def next(self) -> float:
        """The jittered delay to wait now; the one after it is twice as long, up to the cap."""
        delay = backoff_delay(self.base, self.cap, self._attempt, self._rng)
        self._attempt += 1
        return delay

    def reset(self) -> None:
        """Start again from the base delay."""
        self._attempt = 0

"""Turn starts per user (RATE_LIMIT), counted with `limits`, in Redis when one is set up.

The `limits` library keeps a moving window per user: at most N turn starts in any window,
whichever of the user's tokens started them, and the 429's Retry-After is exactly when the
oldest counted start leaves it. With a Redis URL every worker process shares the counts;
otherwise each process counts in memory.

A start is tested first (nothing counted) and counted last, inside the transaction that
creates the turn, once every other limit let it through: a refusal by another limit (or a
missing session, a busy one) never uses up the rate.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable

from limits import RateLimitItem, parse_many
from limits.storage import storage_from_string
from limits.strategies import MovingWindowRateLimiter

from domain.errors import LimitExceeded
from telemetry.metrics import RATE_LIMITED

log = logging.getLogger(__name__)
OFF = ("", "off", "none", "0")
NAMESPACE = "turns"


class RateLimiter:
    """One app's limits: `spec` like `60/minute` or `5/second;60/minute` (`off` for none).

    `namespace` keeps the counts of one kind of action (turn starts, new sessions) apart;
    `noun` names it in a refusal.
    """

    def __init__(
        self, spec: str, storage_url: str, namespace: str = NAMESPACE, noun: str = "turns"
    ) -> None:
        self.items: list[RateLimitItem] = [] if spec.strip().lower() in OFF else parse_many(spec)
        self.storage_url, self.namespace, self.noun = storage_url, namespace, noun
        self.strategy = MovingWindowRateLimiter(storage_from_string(storage_url))

    def test(self, key: str) -> None:
        """Raise LimitExceeded (429) if `key` has no start left now; count nothing."""
        self._check(key, self.strategy.test)

    def hit(self, key: str) -> None:
        """Count one start for `key`; raise LimitExceeded (429) when a limit is used up."""
        self._check(key, self.strategy.hit)

    def _check(self, key: str, take: Callable[[RateLimitItem, str, str], bool]) -> None:
        for item in self.items:
            try:
                if take(item, self.namespace, key):
                    continue
                reset = self.strategy.get_window_stats(item, self.namespace, key).reset_time
            except Exception:
                self._outage()
                return
            self._refuse(item, reset)

    def clear(self, key: str) -> None:
        """Forget every count of `key` (tests, an operator's reset)."""
        for item in self.items:
            self.strategy.clear(item, self.namespace, key)

    def _outage(self) -> None:
        # A rate-limit store outage must not take the API down with it.
        log.warning("rate limit store %s failed; not limiting", self.storage_url)

    def _refuse(self, item: RateLimitItem, reset: float) -> None:
        wait = max(1, math.ceil(reset - time.time()))
        RATE_LIMITED.inc()
        raise LimitExceeded(
            "rate_limited",
            f"Too many {self.noun}: the limit is {_describe(item)} per user. Retry in {wait} s.",
            wait,
            {"limit": item.amount, "window_seconds": item.get_expiry()},
        )


def user_key(user_id: int) -> str:
    """The key a user's turn starts are counted under, whatever token started them."""
    return f"user:{user_id}"


def _describe(item: RateLimitItem) -> str:
    unit = item.GRANULARITY.name
    per = unit if item.multiples == 1 else f"{item.multiples} {unit}s"
    return f"{item.amount} per {per}"

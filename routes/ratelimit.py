"""Per-token rate limits on turn creation (RATE_LIMIT), counted in Redis when one is set up.

The `limits` library keeps a moving window per token: at most N turns in any window, and
the 429's Retry-After is exactly when the oldest counted turn leaves it. With a Redis URL
every worker process shares the counts; otherwise each process counts in memory.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

from flask import current_app, g
from limits import RateLimitItem, parse_many
from limits.storage import storage_from_string
from limits.strategies import MovingWindowRateLimiter

from engine.errors import LimitExceeded
from telemetry.metrics import RATE_LIMITED

log = logging.getLogger(__name__)
F = TypeVar("F", bound=Callable[..., Any])
OFF = ("", "off", "none", "0")


class RateLimiter:
    """One app's limits: `spec` like `60/minute` or `5/second;60/minute` (`off` for none)."""

    def __init__(self, spec: str, storage_url: str) -> None:
        self.items: list[RateLimitItem] = [] if spec.strip().lower() in OFF else parse_many(spec)
        self.storage_url = storage_url
        self.strategy = MovingWindowRateLimiter(storage_from_string(storage_url))

    def check(self, key: str) -> None:
        """Count one hit for `key`; raise LimitExceeded (429) when a limit is used up."""
        for item in self.items:
            try:
                if self.strategy.hit(item, "turns", key):
                    continue
                reset = self.strategy.get_window_stats(item, "turns", key).reset_time
            except Exception:
                # A rate-limit store outage must not take the API down with it.
                log.warning("rate limit store %s failed; not limiting", self.storage_url)
                return
            wait = max(1, math.ceil(reset - time.time()))
            RATE_LIMITED.inc()
            raise LimitExceeded(
                "rate_limited",
                f"Too many turns: the limit is {_describe(item)} per token. Retry in {wait} s.",
                wait,
                {"limit": item.amount, "window_seconds": item.get_expiry(), "retry_after": wait},
            )


def storage_url(config: dict[str, Any]) -> str:
    """RATE_LIMIT_STORAGE_URL, else the event log's Redis, else this process's memory."""
    explicit = config.get("RATE_LIMIT_STORAGE_URL")
    if explicit:
        return str(explicit)
    events = str(config.get("EVENT_LOG_URL") or "")
    return events if events.startswith(("redis://", "rediss://")) else "memory://"


def rate_limited(view: F) -> F:
    """Count the call against the caller's token (after login_required)."""

    @wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        limiter: RateLimiter = current_app.extensions["rate_limiter"]
        token_id = g.get("token_id")
        limiter.check(f"token:{token_id}" if token_id is not None else f"user:{g.user_id}")
        return view(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def _describe(item: RateLimitItem) -> str:
    unit = item.GRANULARITY.name
    per = unit if item.multiples == 1 else f"{item.multiples} {unit}s"
    return f"{item.amount} per {per}"

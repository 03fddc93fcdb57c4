"""Per-user limits checked before a turn starts: tokens per UTC day, turns running at once,
turn starts per window (RATE_LIMIT, engine/ratelimit.py).

The first two are counted in the database, so they hold across worker processes. The
running-turns count is checked again inside the transaction that creates the turn
(TurnStore.start_turn), which makes it exact; the daily budget is checked before, since a
turn's tokens are only known once it ran (the turn that crosses the budget finishes; the next
one is refused). The rate is only tested here and counted last (`count_start`), so a start
refused by any limit uses up none of the others.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import bindparam, func, select

from config import Timings
from engine.errors import LimitExceeded
from engine.ratelimit import RateLimiter, user_key
from engine.upstream.tokens import usage_tokens
from models import Message, Turn
from models.chat import TURN_RUNNING
from models.db import Database

DAY = timedelta(days=1)
# Counts the running turns of the user bound as `_user` (built once: it runs on every start).
RUNNING_TURNS = (
    select(func.count())
    .select_from(Turn)
    .where(Turn.user_id == bindparam("_user"), Turn.status == TURN_RUNNING)
)


@dataclass(frozen=True)
class Limits:
    """USER_DAILY_TOKENS and USER_MAX_CONCURRENT_TURNS; None means unlimited."""

    daily_tokens: int | None = None
    max_running: int | None = 4
    # A running turn usually ends within seconds: a client refused for it may try again soon.
    retry_after: float = Timings.busy_retry_after


class UserLimits:
    """Checks a user's limits in short read transactions."""

    def __init__(
        self,
        db: Database,
        limits: Limits,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
        rate: RateLimiter | None = None,
    ) -> None:
        self.db, self.limits, self.now, self.rate = db, limits, now, rate

    @property
    def max_running(self) -> int | None:
        """Turns a user may run at once (None: unlimited)."""
        return self.limits.max_running

    def admit(self, user_id: int, count_running: bool = True) -> None:
        """Raise LimitExceeded if the user may not start a turn now.

        `count_running=False` leaves out the count of running turns, for a caller whose
        start counts them again in its own transaction.
        """
        if self.limits.daily_tokens is not None:
            self._check_daily(user_id, self.limits.daily_tokens)
        if count_running and self.limits.max_running is not None:
            with self.db.begin_read() as conn:
                running = conn.scalar(RUNNING_TURNS, {"_user": user_id}) or 0
            check_running(running, self.limits.max_running, self.limits.retry_after)
        if self.rate is not None:
            self.rate.test(user_key(user_id))

    def count_start(self, user_id: int) -> None:
        """Count one turn start against the user's rate; raise LimitExceeded if none is left."""
        if self.rate is not None:
            self.rate.hit(user_key(user_id))

    def tokens_today(self, user_id: int) -> int:
        """Return every token the user's messages used since the start of the UTC day."""
        midnight = _midnight(self.now())
        with self.db.read() as s:
            rows = s.scalars(
                select(Message.usage)
                .join(Turn, Turn.id == Message.turn_id)
                .where(
                    Turn.user_id == user_id,
                    # A turn outlives midnight by minutes at most: this bounds the scan.
                    Turn.created_at >= midnight - DAY,
                    Message.created_at >= midnight,
                    Message.usage.is_not(None),
                )
            )
            return sum(usage_tokens(usage) for usage in rows)

    def _check_daily(self, user_id: int, budget: int) -> None:
        used = self.tokens_today(user_id)
        if used < budget:
            return
        now = self.now()
        wait = (_midnight(now) + DAY - now).total_seconds()
        raise LimitExceeded(
            "daily_token_limit",
            "You have used today's token budget; it renews at midnight UTC.",
            max(1.0, math.ceil(wait)),
            {"limit": budget, "used": used},
        )


def check_running(running: int, limit: int, retry_after: float) -> None:
    """Raise LimitExceeded if `running` turns leave no room under `limit`."""
    if running >= limit:
        raise LimitExceeded(
            "too_many_turns",
            f"You already have {running} turns running (at most {limit}); wait for one to end.",
            retry_after,
            {"limit": limit, "running": running},
        )


def _midnight(now: datetime) -> datetime:
    now = now.astimezone(UTC) if now.tzinfo else now.replace(tzinfo=UTC)
    return now.replace(hour=0, minute=0, second=0, microsecond=0)

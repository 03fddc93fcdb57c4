"""Per-user limits: tokens per UTC day, turns running at once, turn starts per window
(RATE_LIMIT, engine/ratelimit.py).

Every path that starts model work asks one function, `Admission.check`, inside the
transaction that would start it, with the user's row locked (PostgreSQL; SQLite's BEGIN
IMMEDIATE serializes every writer): a new message, a regenerate or an edit
(TurnStore.start_turn), a queued turn's promotion and the upkeep's stranded pass
(engine/store/starts.py `promote`), and the continuation of a paused turn after a decision
or an expiry (engine/store/approvals.py). What the caller does with a refusal depends on who
asked: a request gets 429; a turn that would exceed the running turns waits `queued` for a
place; a queued turn whose user spent the day's tokens ends `failed`.

The first two are counted in the database, so they hold across worker processes. A turn's
tokens are only known once it ran (the turn that crosses the budget finishes; the next one
is refused). The rate is only tested before and counted last, when a request really creates
a turn (`count_start`), so a request refused by any limit uses up none of the others.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import Connection, bindparam, func, select

from domain.errors import LimitExceeded
from engine.ratelimit import RateLimiter, user_key
from engine.upstream.estimate import usage_tokens
from models import Message, Turn, User
from models.chat import TURN_RUNNING
from models.db import Database

DAY = timedelta(days=1)
DAILY, RUNNING = "daily_token_limit", "too_many_turns"
# Built once: they run on every start of a limited user's turn.
RUNNING_TURNS = (
    select(func.count())
    .select_from(Turn)
    .where(Turn.user_id == bindparam("_user"), Turn.status == TURN_RUNNING)
)
_LOCK_USER = (
    select(User.__table__.c.id)
    .where(User.__table__.c.id == bindparam("_user"))
    .with_for_update(key_share=True)
)
_USAGE = (
    select(Message.__table__.c.usage)
    .join(Turn.__table__, Turn.__table__.c.id == Message.__table__.c.turn_id)
    .where(
        Turn.__table__.c.user_id == bindparam("_user"),
        # A turn outlives midnight by minutes at most: this bounds the scan.
        Turn.__table__.c.created_at >= bindparam("_since"),
        Message.__table__.c.created_at >= bindparam("_midnight"),
        Message.__table__.c.usage.is_not(None),
    )
)


@dataclass(frozen=True, kw_only=True)
class Limits:
    """USER_DAILY_TOKENS and USER_MAX_CONCURRENT_TURNS; None means unlimited."""

    daily_tokens: int | None = None
    max_running: int | None = None
    # A running turn usually ends within seconds: a client refused for it may try again soon.
    retry_after: float


class Admission:
    """Whether a user's turn may run now: the one check of every path that starts model work."""

    def __init__(
        self, limits: Limits | None = None, now: Callable[[], datetime] = lambda: datetime.now(UTC)
    ) -> None:
        self.limits = limits or Limits(retry_after=0.0)  # nothing refuses
        self.now = now

    @property
    def limited(self) -> bool:
        """True if any limit is set (otherwise nothing is counted)."""
        return self.limits.daily_tokens is not None or self.limits.max_running is not None

    @staticmethod
    def lock(conn: Connection, user_id: int) -> None:
        """Lock the user's row, before any session row: what starts, continues or ends one
        user's turns then serializes, on every worker (a waiting turn of any session of theirs
        may start). A no-op on SQLite, whose BEGIN IMMEDIATE serializes every writer."""
        if conn.dialect.name != "sqlite":
            conn.execute(_LOCK_USER, {"_user": user_id})

    def check(self, conn: Connection, user_id: int, lock: bool = True) -> LimitExceeded | None:
        """What keeps a turn of the user from running now (the day's tokens spent first, then
        every running place taken), or None; asked with the user's row locked (`lock=False`
        for a read-only early look)."""
        if lock:
            self.lock(conn, user_id)
        if not self.limited:
            return None
        budget = self.limits.daily_tokens
        if budget is not None:
            used = tokens_today(conn, user_id, self.now())
            if used >= budget:
                now = self.now()
                wait = (_midnight(now) + DAY - now).total_seconds()
                return LimitExceeded(
                    DAILY,
                    "You have used today's token budget; it renews at midnight UTC.",
                    max(1.0, math.ceil(wait)),
                    {"limit": budget, "used": used},
                )
        limit = self.limits.max_running
        if limit is not None:
            running = conn.scalar(RUNNING_TURNS, {"_user": user_id}) or 0
            if running >= limit:
                return LimitExceeded(
                    RUNNING,
                    f"You already have {running} turns running (at most {limit}); "
                    "wait for one to end.",
                    self.limits.retry_after,
                    {"limit": limit, "running": running},
                )
        return None


class UserLimits:
    """A worker's limits: the admission every start asks, and the rate (RATE_LIMIT)."""

    def __init__(
        self,
        db: Database,
        limits: Limits,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
        rate: RateLimiter | None = None,
    ) -> None:
        self.db, self.rate = db, rate
        self.admission = Admission(limits, now)

    @property
    def limits(self) -> Limits:
        """The limits of this worker."""
        return self.admission.limits

    def admit(self, user_id: int, count_running: bool = True) -> None:
        """Raise LimitExceeded if the user may not start a turn now (an early look that
        writes nothing, for a caller that writes before its start's own transaction).

        `count_running=False` leaves out the running turns, which the start counts again.
        """
        with self.db.begin_read() as conn:
            refusal = self.admission.check(conn, user_id, lock=False)
        if refusal is not None and (count_running or refusal.code != RUNNING):
            raise refusal
        self.test_rate(user_id)

    def test_rate(self, user_id: int) -> None:
        """Raise LimitExceeded if the user has no turn start left now; count nothing."""
        if self.rate is not None:
            self.rate.test(user_key(user_id))

    def count_start(self, user_id: int) -> None:
        """Count one turn start against the user's rate; raise LimitExceeded if none is left."""
        if self.rate is not None:
            self.rate.hit(user_key(user_id))


def tokens_today(conn: Connection, user_id: int, now: datetime) -> int:
    """Every token the user's messages used since the start of `now`'s UTC day."""
    midnight = _midnight(now)
    params = {"_user": user_id, "_since": midnight - DAY, "_midnight": midnight}
    return sum(usage_tokens(usage) for usage in conn.scalars(_USAGE, params))


def _midnight(now: datetime) -> datetime:
    now = now.astimezone(UTC) if now.tzinfo else now.replace(tzinfo=UTC)
    return now.replace(hour=0, minute=0, second=0, microsecond=0)

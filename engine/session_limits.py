"""New sessions per user: a rate (SESSION_RATE_LIMIT) and a cap on those kept (USER_MAX_SESSIONS).

Every path that creates a session (`POST /api/sessions`, a turn started without a session,
an AI SDK chat id seen for the first time) calls `check` in the transaction that inserts the
session, before the insert, and `count` as the last step before its commit, so a refusal by
anything writes nothing and a refused creation uses up no rate.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection, bindparam, func, select

from domain.errors import Conflict
from engine.ratelimit import RateLimiter, user_key
from models import ChatSession, User

_SESSIONS = (
    select(func.count()).select_from(ChatSession).where(ChatSession.user_id == bindparam("_user"))
)
# The lock every start of the user takes too (engine/store/turns.py): two creations of one
# user cannot both take the last place on PostgreSQL (SQLite's BEGIN IMMEDIATE serializes).
_LOCK_USER = (
    select(User.__table__.c.id)
    .where(User.__table__.c.id == bindparam("_user"))
    .with_for_update(key_share=True)
)


@dataclass(frozen=True)
class SessionLimits:
    """The limits on a user's new sessions; None (or a rate of `off`) means unlimited."""

    rate: RateLimiter | None = None
    max_sessions: int | None = None

    def check(self, conn: Connection, user_id: int) -> None:
        """Raise LimitExceeded (429) or Conflict (409) if the user may not create a session."""
        if self.rate is not None:
            self.rate.test(user_key(user_id))
        if self.max_sessions is None:
            return
        if conn.dialect.name != "sqlite":
            conn.execute(_LOCK_USER, {"_user": user_id})
        kept = conn.scalar(_SESSIONS, {"_user": user_id}) or 0
        if kept >= self.max_sessions:
            raise Conflict(
                f"You have {kept} chats (at most {self.max_sessions}); delete some to start "
                "another.",
                code="too_many_sessions",
            )

    def count(self, user_id: int) -> None:
        """Count one new session against the user's rate (LimitExceeded when none is left)."""
        if self.rate is not None:
            self.rate.hit(user_key(user_id))


def session_limits(rate: str, storage_url: str, max_sessions: int) -> SessionLimits:
    """SESSION_RATE_LIMIT (`off`: none) and USER_MAX_SESSIONS (0: unlimited)."""
    limiter = RateLimiter(rate, storage_url, namespace="sessions", noun="new chats")
    return SessionLimits(limiter if limiter.items else None, max_sessions or None)

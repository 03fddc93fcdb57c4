"""API tokens as their owner manages them: authenticate, list, create, revoke."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import bindparam, func, or_, select, update

from domain.errors import Conflict, NotFound, Unauthorized
from engine.store.core import table
from models import ApiToken, User
from models.base import utcnow
from models.db import Database
from telemetry import audit

# last_used_at is written at most this often per token: a write per request would queue
# every request behind SQLite's one writer.
LAST_USED_EVERY = timedelta(minutes=1)
MAX_ACTIVE_TOKENS = 100
_TABLE = table(ApiToken)
_T = _TABLE.c
# Built once: every request authenticates, and building a statement costs more than running it.
_BY_HASH = select(_T.id, _T.user_id, _T.expires_at, _T.revoked_at, _T.last_used_at).where(
    _T.token_hash == bindparam("_hash")
)
_USED = update(_TABLE).where(_T.id == bindparam("_id"))


@dataclass(frozen=True, slots=True)
class Caller:
    """Who a valid token belongs to."""

    user_id: int
    token_id: int


def aware(moment: datetime | None) -> datetime | None:
    """Return `moment` in UTC (SQLite hands back naive datetimes)."""
    if moment is None:
        return None
    return moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)


def authenticate(db: Database, token: str) -> Caller:
    """Return the caller a clear token stands for, or raise Unauthorized."""
    now = utcnow()
    with db.begin_read() as conn:
        row = conn.execute(_BY_HASH, {"_hash": ApiToken.hash(token)}).one_or_none()
    if row is None:
        raise Unauthorized("The API token is not valid.")
    check_usable(row.expires_at, row.revoked_at, now)
    last = aware(row.last_used_at)
    if last is None or now - last >= LAST_USED_EVERY:
        with db.begin() as conn:
            conn.execute(_USED, {"_id": row.id, "last_used_at": now})
    return Caller(row.user_id, row.id)


def check_token_id(db: Database, token_id: int) -> None:
    """Raise Unauthorized unless the token with this id is still usable."""
    with db.read() as s:
        row = s.execute(
            select(ApiToken.expires_at, ApiToken.revoked_at).where(ApiToken.id == token_id)
        ).one_or_none()
    if row is None:
        raise Unauthorized("The API token was revoked.", code="token_revoked")
    check_usable(row.expires_at, row.revoked_at, utcnow())


def check_usable(expires_at: datetime | None, revoked_at: datetime | None, now: datetime) -> None:
    """Raise Unauthorized for a revoked or expired token."""
    if revoked_at is not None:
        raise Unauthorized("The API token was revoked.", code="token_revoked")
    expiry = aware(expires_at)
    if expiry is not None and expiry <= now:
        raise Unauthorized("The API token has expired.", code="token_expired")


def list_tokens(db: Database, user_id: int, current: int | None = None) -> list[dict[str, Any]]:
    """Return the user's tokens that are not revoked, newest first (never the secret)."""
    with db.read() as s:
        rows = s.scalars(
            select(ApiToken)
            .where(ApiToken.user_id == user_id, ApiToken.revoked_at.is_(None))
            .order_by(ApiToken.created_at.desc(), ApiToken.id.desc())
        ).all()
    now = utcnow()
    return [token_dict(r, now, current) for r in rows]


def create_token(
    db: Database, user_id: int, name: str, expires_at: datetime | None
) -> dict[str, Any]:
    """Issue a token; the result holds the clear `token`, shown this once."""
    now = utcnow()
    with db.transaction() as s:
        active = s.scalar(
            select(func.count())
            .select_from(ApiToken)
            .where(
                ApiToken.user_id == user_id,
                ApiToken.revoked_at.is_(None),
                or_(ApiToken.expires_at.is_(None), ApiToken.expires_at > now),
            )
        )
        if (active or 0) >= MAX_ACTIVE_TOKENS:
            raise Conflict(
                f"A user may hold {MAX_ACTIVE_TOKENS} usable tokens; revoke one first.",
                code="too_many_tokens",
            )
        user = s.get(User, user_id)
        if user is None:
            raise NotFound("user")
        row, clear = ApiToken.issue(user, name, expires_at)
        s.add(row)
        s.flush()
        made = {**token_dict(row, now), "token": clear}
    audit.record("token_created", user_id=user_id, token_id=made["id"], name=name)
    return made


def revoke_token(db: Database, user_id: int, token_id: int) -> None:
    """Revoke one of the user's tokens; anyone else's, or one revoked already, is not found."""
    with db.transaction() as s:
        done = s.execute(
            update(ApiToken)
            .where(
                ApiToken.id == token_id,
                ApiToken.user_id == user_id,
                ApiToken.revoked_at.is_(None),
            )
            .values(revoked_at=utcnow())
        )
        if done.rowcount != 1:  # type: ignore[attr-defined]
            raise NotFound("token")
    audit.record("token_revoked", user_id=user_id, token_id=token_id)


def unusable_since(db: Database, since: datetime, now: datetime) -> list[int]:
    """Return ids of tokens revoked after `since`, or expired between `since` and `now`."""
    with db.read() as s:
        return list(
            s.scalars(
                select(ApiToken.id).where(
                    or_(
                        ApiToken.revoked_at > since,
                        (ApiToken.expires_at > since) & (ApiToken.expires_at <= now),
                    )
                )
            )
        )


def token_dict(row: ApiToken, now: datetime, current: int | None = None) -> dict[str, Any]:
    """Serialize a token row for its owner."""
    expires = aware(row.expires_at)
    return {
        "id": row.id,
        "name": row.name,
        "created_at": _iso(row.created_at),
        "expires_at": _iso(expires),
        "last_used_at": _iso(row.last_used_at),
        "expired": expires is not None and expires <= now,
        "current": row.id == current,
    }


def _iso(moment: datetime | None) -> str | None:
    value = aware(moment)
    return value.isoformat() if value else None

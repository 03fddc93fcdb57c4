"""Users and their API tokens (stored as SHA-256 hashes, never in clear)."""

from __future__ import annotations

import hashlib
import secrets
from datetime import UTC, datetime

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column, relationship

from models.base import Base, utcnow


class User(Base):
    """A person or app that owns chat sessions and finance data."""

    __tablename__ = "users"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(80), unique=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    tokens: Mapped[list[ApiToken]] = relationship(
        back_populates="user", cascade="all, delete-orphan", passive_deletes=True
    )


class ApiToken(Base):
    """A bearer token; only its hash is kept."""

    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    name: Mapped[str] = mapped_column(String(100), default="token", server_default="token")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # Both indexed: each worker's revocation watcher asks for rows revoked or expired lately.
    expires_at: Mapped[datetime | None] = mapped_column(index=True)
    revoked_at: Mapped[datetime | None] = mapped_column(index=True)
    last_used_at: Mapped[datetime | None]

    user: Mapped[User] = relationship(back_populates="tokens")

    @staticmethod
    def hash(token: str) -> str:
        """Return the stored form of a token."""
        return hashlib.sha256(token.encode()).hexdigest()

    @classmethod
    def issue(
        cls, user: User, name: str = "token", expires_at: datetime | None = None
    ) -> tuple[ApiToken, str]:
        """Create a token row for `user`; return it with the clear token, shown once."""
        token = "cbt_" + secrets.token_urlsafe(32)
        row = cls(user=user, token_hash=cls.hash(token), name=name, expires_at=expires_at)
        return row, token

    def usable(self, now: datetime) -> bool:
        """True while the token is neither revoked nor expired at `now`."""
        if self.revoked_at is not None:
            return False
        expires = self.expires_at
        if expires is not None and expires.tzinfo is None:  # SQLite drops the zone
            expires = expires.replace(tzinfo=UTC)
        return expires is None or expires > now

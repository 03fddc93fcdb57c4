"""Users and their API tokens (stored as SHA-256 hashes, never in clear)."""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime

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
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    user: Mapped[User] = relationship(back_populates="tokens")

    @staticmethod
    def hash(token: str) -> str:
        """Return the stored form of a token."""
        return hashlib.sha256(token.encode()).hexdigest()

    @classmethod
    def issue(cls, user: User) -> tuple[ApiToken, str]:
        """Create a token row for `user`; return it with the clear token, shown once."""
        token = "cbt_" + secrets.token_urlsafe(32)
        return cls(user=user, token_hash=cls.hash(token)), token

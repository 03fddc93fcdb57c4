"""Tool sources' rows: tools a user let run for a session, and per-user MCP credentials."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from models.base import Base, utcnow


class ToolGrant(Base):
    """A tool the user answered "always for this session": its calls there need no approval."""

    __tablename__ = "tool_grants"
    __table_args__ = (UniqueConstraint("session_id", "name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    session_id: Mapped[str] = mapped_column(
        String(32), ForeignKey("chat_sessions.id", ondelete="CASCADE")
    )
    name: Mapped[str] = mapped_column(String(100))
    granted_by: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class McpCredential(Base):
    """A user's secret for one MCP server, encrypted (Fernet); never logged or returned."""

    __tablename__ = "mcp_credentials"
    __table_args__ = (UniqueConstraint("user_id", "server"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    server: Mapped[str] = mapped_column(String(32))
    secret: Mapped[str] = mapped_column(Text)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)

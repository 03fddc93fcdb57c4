"""Typed SQLAlchemy models; importing this package registers every table."""

from models.base import Base, new_id, utcnow
from models.chat import ChatSession, Message, ToolRun, Turn, TurnEvents
from models.user import ApiToken, User

__all__ = [
    "ApiToken",
    "Base",
    "ChatSession",
    "Message",
    "ToolRun",
    "Turn",
    "TurnEvents",
    "User",
    "new_id",
    "utcnow",
]

"""Typed SQLAlchemy models; importing this package registers every table."""

from models.base import Base, new_id, utcnow
from models.chat import ChatSession, Message, ToolRun, Turn, TurnEvents, Worker
from models.connector import (
    ConnectorAction,
    OAuthClient,
    OAuthCode,
    OAuthConnection,
    OAuthToken,
)
from models.finance import Account, Budget, Category, RecurringChoice, Transaction
from models.imports import CategoryRule, ImportMapping, ImportRow, ImportSlot, StatementImport
from models.tool_sources import McpCredential, ToolGrant
from models.ui_chat import UIChat
from models.user import ApiToken, User

__all__ = [
    "Account",
    "ApiToken",
    "Base",
    "Budget",
    "Category",
    "CategoryRule",
    "ChatSession",
    "ConnectorAction",
    "ImportMapping",
    "ImportRow",
    "ImportSlot",
    "McpCredential",
    "Message",
    "OAuthClient",
    "OAuthCode",
    "OAuthConnection",
    "OAuthToken",
    "RecurringChoice",
    "StatementImport",
    "ToolGrant",
    "ToolRun",
    "Transaction",
    "Turn",
    "TurnEvents",
    "UIChat",
    "User",
    "Worker",
    "new_id",
    "utcnow",
]

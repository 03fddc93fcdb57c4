"""Reading users' MCP secrets (Fernet, at rest) to fill their headers; the key they are sealed with.

The engine's MCP hub reads a secret through `Credentials.get` on the store pool; writing and
forgetting them is the service's (services/mcp_credentials.py builds on this class).
"""

from __future__ import annotations

import base64
import hashlib

from cryptography.fernet import Fernet, InvalidToken
from sqlalchemy import select

from engine.store.core import table
from models import McpCredential
from models.db import Database

C = table(McpCredential).c


def fernet_key(key: str, secret_key: str) -> bytes:
    """MCP_CREDENTIALS_KEY (a Fernet key), else one derived from SECRET_KEY."""
    if key:
        return key.encode()
    return base64.urlsafe_b64encode(
        hashlib.sha256(b"mcp-credentials\0" + secret_key.encode()).digest()
    )


class Credentials:
    """Each user's secret per MCP server, read back (decrypted) only to fill headers."""

    def __init__(self, db: Database, key: bytes) -> None:
        self.db, self._fernet = db, Fernet(key)

    def get(self, user_id: int, server: str) -> str | None:
        """The user's secret for `server`; None when there is none or it no longer decrypts."""
        with self.db.begin_read() as conn:
            stored = conn.scalar(select(C.secret).where(C.user_id == user_id, C.server == server))
        if stored is None:
            return None
        try:
            return self._fernet.decrypt(stored.encode()).decode()
        except InvalidToken:
            return None  # the key changed: the user stores it again

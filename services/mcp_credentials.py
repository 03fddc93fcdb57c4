"""Per-user secrets for MCP servers, encrypted at rest (Fernet); never logged or returned."""

from __future__ import annotations

import base64
import hashlib

from cryptography.fernet import Fernet, InvalidToken
from sqlalchemy import delete, insert, select, update

from engine.store.core import table
from models import McpCredential, utcnow
from models.db import Database

C = table(McpCredential).c


def fernet_key(key: str, secret_key: str) -> bytes:
    """MCP_CREDENTIALS_KEY (a Fernet key), else one derived from SECRET_KEY."""
    if key:
        return key.encode()
    return base64.urlsafe_b64encode(
        hashlib.sha256(b"mcp-credentials\0" + secret_key.encode()).digest()
    )


class CredentialStore:
    """Each user's secret per MCP server: stored encrypted, read back only to fill headers."""

    def __init__(self, db: Database, key: bytes) -> None:
        self.db, self._fernet = db, Fernet(key)

    def put(self, user_id: int, server: str, value: str) -> None:
        """Store (or replace) the user's secret for `server`."""
        secret = self._fernet.encrypt(value.encode()).decode()
        with self.db.begin() as conn:
            key = (C.user_id == user_id, C.server == server)
            if not conn.execute(
                update(McpCredential).where(*key).values(secret=secret, updated_at=utcnow())
            ).rowcount:
                conn.execute(
                    insert(McpCredential).values(
                        user_id=user_id, server=server, secret=secret, updated_at=utcnow()
                    )
                )

    def delete(self, user_id: int, server: str) -> None:
        """Forget the user's secret for `server` (none: nothing to do)."""
        with self.db.begin() as conn:
            conn.execute(delete(McpCredential).where(C.user_id == user_id, C.server == server))

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

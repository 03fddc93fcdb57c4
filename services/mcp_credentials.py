"""Per-user secrets for MCP servers, encrypted at rest (Fernet); never logged or returned.

Reading them back and the key live in engine/store/credentials.py (the engine's MCP hub reads
them); this service adds storing and forgetting them.
"""

from __future__ import annotations

from sqlalchemy import delete, insert, update

from engine.store.credentials import C, Credentials, fernet_key
from models import McpCredential, utcnow

__all__ = ["CredentialStore", "fernet_key"]


class CredentialStore(Credentials):
    """Each user's secret per MCP server: stored encrypted, read back only to fill headers."""

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

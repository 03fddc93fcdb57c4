"""The connector's rows: OAuth clients, the apps a user connected, codes, tokens, actions.

Secrets (authorization codes, access and refresh tokens, client secrets) are kept as SHA-256
hashes only, as API tokens are (models/user.py).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from models.base import Base, utcnow

# A client id of ours (dynamic registration) or a client ID metadata document's https URL.
CLIENT_ID_CHARS = 1000


class OAuthClient(Base):
    """A client that may ask users for access: registered (RFC 7591) or a metadata document."""

    __tablename__ = "oauth_clients"

    id: Mapped[int] = mapped_column(primary_key=True)
    client_id: Mapped[str] = mapped_column(String(CLIENT_ID_CHARS), unique=True)
    kind: Mapped[str] = mapped_column(String(8))  # "dcr" or "cimd"
    name: Mapped[str] = mapped_column(String(200))
    redirect_uris: Mapped[list[str]] = mapped_column(JSON)
    grant_types: Mapped[list[str]] = mapped_column(JSON)
    token_endpoint_auth_method: Mapped[str] = mapped_column(String(32))
    secret_hash: Mapped[str | None] = mapped_column(String(64))
    # The registration or the fetched document, as the client sent it (bounded in size).
    document: Mapped[dict[str, Any]]
    # A metadata document is fetched again once this passes.
    expires_at: Mapped[datetime | None]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class OAuthConnection(Base):
    """A connected app: one user's consent to one client, until revoked."""

    __tablename__ = "oauth_connections"
    __table_args__ = (Index("ix_oauth_connections_user_client", "user_id", "client_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    client_id: Mapped[int] = mapped_column(ForeignKey("oauth_clients.id", ondelete="CASCADE"))
    scope: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_used_at: Mapped[datetime | None]
    revoked_at: Mapped[datetime | None]


class OAuthCode(Base):
    """An authorization code: single use, short-lived, bound to its PKCE challenge."""

    __tablename__ = "oauth_codes"

    id: Mapped[int] = mapped_column(primary_key=True)
    code_hash: Mapped[str] = mapped_column(String(64), unique=True)
    # The user who consented and the client: the connected app is made when it is redeemed.
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    client_id: Mapped[int] = mapped_column(ForeignKey("oauth_clients.id", ondelete="CASCADE"))
    redirect_uri: Mapped[str] = mapped_column(Text)
    scope: Mapped[str] = mapped_column(String(200))
    resource: Mapped[str] = mapped_column(Text)
    code_challenge: Mapped[str] = mapped_column(String(128))
    code_challenge_method: Mapped[str] = mapped_column(String(8))
    expires_at: Mapped[datetime]
    used_at: Mapped[datetime | None]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class OAuthToken(Base):
    """An access token and its refresh token, bound to a resource (RFC 8707) and a scope."""

    __tablename__ = "oauth_tokens"

    id: Mapped[int] = mapped_column(primary_key=True)
    connection_id: Mapped[int] = mapped_column(
        ForeignKey("oauth_connections.id", ondelete="CASCADE"), index=True
    )
    code_id: Mapped[int | None] = mapped_column(Integer)  # the code it was first issued for
    access_hash: Mapped[str] = mapped_column(String(64), unique=True)
    refresh_hash: Mapped[str | None] = mapped_column(String(64), unique=True)
    scope: Mapped[str] = mapped_column(String(200))
    resource: Mapped[str] = mapped_column(Text)
    access_expires_at: Mapped[datetime]
    refresh_expires_at: Mapped[datetime | None]
    # Set when its refresh token was exchanged for the next pair (rotation).
    rotated_at: Mapped[datetime | None]
    revoked_at: Mapped[datetime | None]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class ConnectorAction(Base):
    """A write tool an app called over /mcp: nothing changes until the user approves it."""

    __tablename__ = "connector_actions"
    __table_args__ = (Index("ix_connector_actions_user_status", "user_id", "status"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    # Who asked: a connected app, or a static API token.
    connection_id: Mapped[int | None] = mapped_column(
        ForeignKey("oauth_connections.id", ondelete="CASCADE")
    )
    api_token_id: Mapped[int | None] = mapped_column(
        ForeignKey("api_tokens.id", ondelete="CASCADE")
    )
    client_name: Mapped[str] = mapped_column(String(200))
    name: Mapped[str] = mapped_column(String(100))
    input: Mapped[dict[str, Any]]
    # SHA-256 of the call (tool and arguments): the same call again finds this action.
    input_digest: Mapped[str] = mapped_column(String(64))
    preview: Mapped[dict[str, Any]]
    status: Mapped[str] = mapped_column(String(24))
    approval: Mapped[str | None] = mapped_column(String(16))
    decided_by: Mapped[int | None] = mapped_column(Integer)
    decided_at: Mapped[datetime | None]
    reason: Mapped[str | None] = mapped_column(Text)
    result: Mapped[list[dict[str, Any]] | None]
    is_error: Mapped[bool] = mapped_column(default=False)
    # When the app was told the outcome (a later identical call is a new action).
    reported_at: Mapped[datetime | None]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[datetime | None]

"""The connector's tokens: issued (hashed at rest), checked at /mcp on every request (so a
revocation holds at once on every worker), rotated, revoked; the resource they are bound to."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from authlib.oauth2.rfc6749 import OAuth2Error, TokenMixin
from sqlalchemy import select, update

from config import Timings
from domain.errors import Unauthorized
from models.base import utcnow
from models.connector import OAuthClient, OAuthConnection, OAuthToken
from models.db import Database
from services.api_tokens import LAST_USED_EVERY, aware

MCP_PATH = "/mcp"


class InvalidTarget(OAuth2Error):  # type: ignore[misc]
    """RFC 8707: the `resource` asked for is not one this server issues tokens for."""

    error = "invalid_target"


def token_hash(token: str) -> str:
    """The stored form of a code or token."""
    return hashlib.sha256(token.encode()).hexdigest()


def canonical(uri: str) -> str:
    """A resource URI compared as the MCP spec says: scheme and host in lower case, no
    fragment, no trailing slash."""
    parts = urlsplit(uri.strip())
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, parts.query, ""))


def resource_of(base: str) -> str:
    """`/mcp`'s resource identifier at the server's public origin `base`."""
    return canonical(base) + MCP_PATH


def resource_for(asked: str | None, base: str) -> str:
    """The resource a token is bound to: ours (asked for as `/mcp` or as the origin)."""
    ours = resource_of(base)
    if asked is None or canonical(asked) in (ours, canonical(base)):
        return ours
    raise InvalidTarget(description=f"This server issues tokens for {ours} only.")


@dataclass(frozen=True)
class Owner:
    """Whom a token is for: the user, and the connected app (None until one is made)."""

    user_id: int
    client_row_id: int
    connection_id: int | None = None

    def get_user_id(self) -> int:
        return self.user_id


@dataclass(frozen=True)
class TokenView(TokenMixin):  # type: ignore[misc]
    """A stored token as authlib's refresh grant and revocation endpoint ask about it."""

    row_id: int
    owner: Owner
    scope: str
    resource: str
    code_id: int | None

    def check_client(self, client: Any) -> bool:
        return bool(client.row_id == self.owner.client_row_id)

    def get_scope(self) -> str:
        return self.scope

    def get_expires_in(self) -> int:
        return 0

    def is_expired(self) -> bool:
        return False  # only unexpired tokens are ever looked up

    def is_revoked(self) -> bool:
        return False


@dataclass(frozen=True)
class Bearer:
    """Who an access token (or a static API token) at /mcp stands for, and what it may do."""

    user_id: int
    scopes: frozenset[str]
    client_name: str
    connection_id: int | None = None
    api_token_id: int | None = None


_T, _C, _K = OAuthToken, OAuthConnection, OAuthClient
_BY_ACCESS = (
    select(
        _T.access_expires_at,
        _T.revoked_at,
        _T.resource,
        _T.scope,
        _C.id.label("connection_id"),
        _C.user_id,
        _C.revoked_at.label("disconnected_at"),
        _C.last_used_at,
        _K.name,
    )
    .join(_C, _C.id == _T.connection_id)
    .join(_K, _K.id == _C.client_id)
)


class TokenStore:
    """Issue, check, rotate and revoke the connector's tokens."""

    def __init__(self, db: Database, timings: Timings) -> None:
        self.db, self.timings = db, timings

    def generate(
        self,
        grant_type: str,
        client: Any,
        user: Any = None,
        scope: str | None = None,
        expires_in: int | None = None,
        include_refresh_token: bool = True,
    ) -> dict[str, Any]:
        """authlib's token generator: opaque random tokens, the access token short-lived."""
        lifetime = int(self.timings.oauth_access)
        token = {
            "token_type": "Bearer",
            "access_token": "cba_" + secrets.token_urlsafe(32),
            "expires_in": max(1, lifetime),
            "scope": scope or "",
        }
        if include_refresh_token:
            token["refresh_token"] = "cbr_" + secrets.token_urlsafe(32)
        return token

    def save(self, token: dict[str, Any], owner: Owner, resource: str, code_id: int | None) -> None:
        """Store a token pair for the owner's connected app, making it if this is the first."""
        now = utcnow()
        refresh = token.get("refresh_token")
        with self.db.transaction() as s:
            connection_id = owner.connection_id
            if connection_id is None:
                connection_id = self._connect(s, owner, token["scope"], now)
            s.add(
                OAuthToken(
                    connection_id=connection_id,
                    code_id=code_id,
                    access_hash=token_hash(token["access_token"]),
                    refresh_hash=token_hash(refresh) if refresh else None,
                    scope=token["scope"],
                    resource=resource,
                    access_expires_at=now + timedelta(seconds=token["expires_in"]),
                    refresh_expires_at=(
                        now + timedelta(seconds=self.timings.oauth_refresh) if refresh else None
                    ),
                )
            )

    @staticmethod
    def _connect(s: Any, owner: Owner, scope: str, now: datetime) -> int:
        """The user's connection to this client: the one in use, or a new one."""
        found = s.scalar(
            select(OAuthConnection).where(
                OAuthConnection.user_id == owner.user_id,
                OAuthConnection.client_id == owner.client_row_id,
                OAuthConnection.revoked_at.is_(None),
            )
        )
        if found is None:
            found = OAuthConnection(
                user_id=owner.user_id, client_id=owner.client_row_id, scope=scope
            )
            s.add(found)
        else:
            found.scope = scope  # what the user consented to last
        found.last_used_at = now
        s.flush()
        return int(found.id)

    def authenticate(self, token: str, resource: str) -> Bearer:
        """The caller an access token stands for at `resource`, or Unauthorized saying why."""
        now = utcnow()
        with self.db.begin_read() as conn:
            row = conn.execute(_BY_ACCESS.where(_T.access_hash == token_hash(token))).first()
        if row is None:
            raise Unauthorized("The access token is not valid.", code="invalid_token")
        if row.revoked_at is not None or row.disconnected_at is not None:
            raise Unauthorized("The access token was revoked.", code="token_revoked")
        expiry = aware(row.access_expires_at)
        if expiry is not None and expiry <= now:
            raise Unauthorized("The access token has expired.", code="token_expired")
        if canonical(row.resource) != canonical(resource):
            raise Unauthorized(
                "The access token was issued for another resource.", code="invalid_token"
            )
        last = aware(row.last_used_at)
        if last is None or now - last >= LAST_USED_EVERY:
            with self.db.begin() as conn:
                conn.execute(
                    update(OAuthConnection)
                    .where(OAuthConnection.id == row.connection_id)
                    .values(last_used_at=now)
                )
        return Bearer(row.user_id, frozenset(row.scope.split()), row.name, row.connection_id)

    def claim_refresh(self, refresh: str) -> TokenView | None:
        """Take a refresh token for one exchange (rotation): None if unknown, expired, revoked
        or used. A used one presented again revokes the whole connection (RFC 9700 4.14.2)."""
        now, digest = utcnow(), token_hash(refresh)
        with self.db.transaction() as s:
            row = s.execute(
                select(OAuthToken, OAuthConnection)
                .join(OAuthConnection, OAuthConnection.id == OAuthToken.connection_id)
                .where(OAuthToken.refresh_hash == digest)
            ).first()
            if row is None:
                return None
            token, connection = row
            if token.rotated_at is not None:
                revoke_connection(s, connection.id, now)  # a used one replayed: stolen?
                return None
            expires = aware(token.refresh_expires_at)
            usable = (
                token.revoked_at is None
                and connection.revoked_at is None
                and expires is not None
                and expires > now
            )
            if not usable:
                return None
            taken = s.execute(
                update(OAuthToken)
                .where(OAuthToken.id == token.id, OAuthToken.rotated_at.is_(None))
                .values(rotated_at=now, revoked_at=now)
            )
            if taken.rowcount != 1:  # type: ignore[attr-defined]
                return None  # another exchange took it first
            owner = Owner(connection.user_id, connection.client_id, connection.id)
            return TokenView(token.id, owner, token.scope, token.resource, token.code_id)

    def find(self, value: str, hint: str | None) -> TokenView | None:
        """A live token by its access or refresh value (RFC 7009's lookup)."""
        digest = token_hash(value)
        columns: list[Any] = [_T.access_hash, _T.refresh_hash]
        if hint == "refresh_token":
            columns.reverse()  # a hint orders the lookup; it does not limit it (RFC 7009 2.1)
        with self.db.read() as s:
            for column in columns:
                row = s.execute(
                    select(OAuthToken, OAuthConnection)
                    .join(OAuthConnection, OAuthConnection.id == OAuthToken.connection_id)
                    .where(column == digest, OAuthToken.revoked_at.is_(None))
                ).first()
                if row is not None:
                    token, connection = row
                    owner = Owner(connection.user_id, connection.client_id, connection.id)
                    return TokenView(token.id, owner, token.scope, token.resource, token.code_id)
        return None

    def revoke(self, row_id: int) -> None:
        """Revoke one token pair (RFC 7009)."""
        with self.db.transaction() as s:
            s.execute(
                update(OAuthToken)
                .where(OAuthToken.id == row_id, OAuthToken.revoked_at.is_(None))
                .values(revoked_at=utcnow())
            )

    def revoke_code_tokens(self, code_id: int) -> None:
        """A code redeemed twice: revoke what was issued for it (RFC 6749 section 4.1.2)."""
        with self.db.transaction() as s:
            connection_id = s.scalar(
                select(OAuthToken.connection_id).where(OAuthToken.code_id == code_id).limit(1)
            )
            if connection_id is not None:
                revoke_connection(s, connection_id, utcnow())


def revoke_connection(
    s: Any, connection_id: int, now: datetime, user_id: int | None = None
) -> bool:
    """In a transaction: revoke a connected app (the user's, when given) and every token of
    it; False when there was none to revoke."""
    where = [OAuthConnection.id == connection_id, OAuthConnection.revoked_at.is_(None)]
    if user_id is not None:
        where.append(OAuthConnection.user_id == user_id)
    done = s.execute(update(OAuthConnection).where(*where).values(revoked_at=now))
    if done.rowcount != 1:
        return False
    s.execute(
        update(OAuthToken)
        .where(OAuthToken.connection_id == connection_id, OAuthToken.revoked_at.is_(None))
        .values(revoked_at=now)
    )
    return True

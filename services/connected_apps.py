"""Connected apps as their user sees them: each app with its scopes and last use; revoke one
and its tokens stop working at once on every worker (each request reads them)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import select

from domain.errors import NotFound
from models.base import iso, utcnow
from models.connector import OAuthClient, OAuthConnection
from models.db import Database
from services.connector_actions import ActionStore
from services.oauth.tokens import revoke_connection
from telemetry import audit


def list_apps(db: Database, user_id: int) -> list[dict[str, Any]]:
    """The user's connected apps not revoked, the most recently used first."""
    with db.read() as s:
        rows = s.execute(
            select(OAuthConnection, OAuthClient)
            .join(OAuthClient, OAuthClient.id == OAuthConnection.client_id)
            .where(OAuthConnection.user_id == user_id, OAuthConnection.revoked_at.is_(None))
            .order_by(OAuthConnection.last_used_at.desc(), OAuthConnection.id.desc())
        ).all()
    return [_app(connection, client) for connection, client in rows]


def _app(connection: OAuthConnection, client: OAuthClient) -> dict[str, Any]:
    hosts = sorted({urlsplit(uri).hostname or "" for uri in client.redirect_uris} - {""})
    return {
        "id": connection.id,
        "client_id": client.client_id,
        "name": client.name or client.client_id,
        "registration": "metadata document" if client.kind == "cimd" else "dynamic",
        "redirect_hosts": hosts,
        "scopes": connection.scope.split(),
        "connected_at": iso(connection.created_at),
        "last_used_at": iso(connection.last_used_at),
    }


def revoke_app(db: Database, actions: ActionStore, user_id: int, app_id: int) -> None:
    """Disconnect one of the user's apps: its tokens are refused from the next request, and
    what it asked for that the user has not decided is declined."""
    with db.transaction() as s:
        if not revoke_connection(s, app_id, utcnow(), user_id):
            raise NotFound("connected app")
    actions.decline_connection(app_id)
    audit.record("connected_app_revoked", user_id=user_id, app=app_id)

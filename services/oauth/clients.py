"""OAuth clients: found by client_id, a metadata document fetched (and kept a while), or a
registration of ours (RFC 7591). What authlib asks of a client is `Client`."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

from authlib.oauth2.rfc6749 import ClientMixin, InvalidClientError
from sqlalchemy import delete, exists, select, update
from sqlalchemy.exc import IntegrityError

from config import Timings
from models.base import utcnow
from models.connector import CLIENT_ID_CHARS, OAuthClient, OAuthConnection
from models.db import Database
from services.api_tokens import aware
from services.oauth.cimd import (
    LOOPBACK_HOSTS,
    ClientRefused,
    check_metadata,
    fetch,
    is_document_url,
    validate_document,
)

SCOPES = ("read", "write")
# Runs a coroutine on the engine's loop from a view's thread (Runtime.run).
RunOnLoop = Callable[[Coroutine[Any, Any, Any], float], Any]


def secret_hash(secret: str) -> str:
    """The stored form of a client secret (as tokens are stored)."""
    return hashlib.sha256(secret.encode()).hexdigest()


@dataclass(frozen=True)
class Client(ClientMixin):  # type: ignore[misc]
    """A client as authlib's grants and endpoints ask about it."""

    row_id: int
    client_id: str
    kind: str
    name: str
    redirect_uris: tuple[str, ...]
    grant_types: tuple[str, ...]
    auth_method: str
    secret: str | None

    @classmethod
    def of(cls, row: Any) -> Client:
        return cls(
            row.id,
            row.client_id,
            row.kind,
            row.name or row.client_id,
            tuple(row.redirect_uris),
            tuple(row.grant_types),
            row.token_endpoint_auth_method,
            row.secret_hash,
        )

    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> str | None:
        # OAuth 2.1: redirect_uri may be left out only when the client registered one.
        return self.redirect_uris[0] if len(self.redirect_uris) == 1 else None

    def get_allowed_scope(self, scope: str | None) -> str:
        # Scopes we do not know are ignored; none we know asked for: all of them.
        known = [s for s in SCOPES if s in (scope or "").split()]
        return " ".join(known or SCOPES)

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        if redirect_uri in self.redirect_uris:
            return True
        # RFC 8252 section 7.3: a native app's loopback redirect may use any port.
        return any(_same_loopback(redirect_uri, known) for known in self.redirect_uris)

    def check_client_secret(self, client_secret: str) -> bool:
        if self.secret is None:
            return False
        return hmac.compare_digest(self.secret, secret_hash(client_secret))

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        return method == self.auth_method

    def check_response_type(self, response_type: str) -> bool:
        return response_type == "code"

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type in self.grant_types

    @property
    def redirect_host(self) -> str:
        """The host its redirects go to, as the consent screen names it."""
        return urlsplit(self.redirect_uris[0]).hostname or ""


def _same_loopback(asked: str, known: str) -> bool:
    a, k = urlsplit(asked), urlsplit(known)
    return (
        a.scheme == k.scheme == "http"
        and a.hostname == k.hostname
        and a.hostname in LOOPBACK_HOSTS
        and (a.path, a.query) == (k.path, k.query)
    )


class ClientStore:
    """Clients by client_id: metadata documents fetched on the loop, registrations stored."""

    def __init__(
        self, db: Database, timings: Timings, allow_loopback: bool, on_loop: RunOnLoop
    ) -> None:
        self.db, self.timings = db, timings
        self.allow_loopback, self.on_loop = allow_loopback, on_loop

    def get(self, client_id: str | None) -> Client | None:
        """The client with this id; a document's is (re)fetched once its copy is stale.

        A document that cannot be used raises authlib's InvalidClientError saying why.
        """
        if not client_id or len(client_id) > CLIENT_ID_CHARS:
            return None
        with self.db.read() as s:
            row = s.scalar(select(OAuthClient).where(OAuthClient.client_id == client_id))
            if row is not None:
                found = Client.of(row)
                expires = aware(row.expires_at)
        if not is_document_url(client_id):
            return found if row is not None else None
        if row is not None and expires is not None and expires > utcnow():
            return found
        try:
            return self._refresh(client_id)
        except TimeoutError as err:
            raise InvalidClientError(description="The client's document did not arrive.") from err
        except ClientRefused as err:
            raise InvalidClientError(description=str(err)) from err

    def _refresh(self, url: str) -> Client:
        t = self.timings
        got = self.on_loop(
            fetch(url, allow_loopback=self.allow_loopback, deadline=t.cimd_fetch),
            t.cimd_fetch * 2,
        )
        kept = validate_document(url, got.document)
        keep_for = t.cimd_cache if got.max_age is None else min(got.max_age, t.cimd_cache)
        values = {
            **kept,
            "kind": "cimd",
            "secret_hash": None,
            "document": got.document,
            "expires_at": utcnow() + timedelta(seconds=keep_for),
        }
        for _ in range(2):  # two first fetches at once: the second updates the first's row
            try:
                with self.db.transaction() as s:
                    row = s.scalar(select(OAuthClient).where(OAuthClient.client_id == url))
                    if row is None:
                        row = OAuthClient(client_id=url, **values)
                        s.add(row)
                    else:
                        for name, value in values.items():
                            setattr(row, name, value)
                    s.flush()
                    return Client.of(row)
            except IntegrityError:
                continue
        raise ClientRefused("The client could not be stored; try again.")

    def register(self, metadata: dict[str, Any]) -> tuple[Client, str | None]:
        """Store a dynamic registration; return the client and its secret (None: public)."""
        kept = check_metadata(metadata, document=False)
        public = kept["token_endpoint_auth_method"] == "none"
        secret = None if public else "ocs_" + secrets.token_urlsafe(32)
        cutoff = utcnow() - timedelta(seconds=self.timings.oauth_unused_client)
        with self.db.transaction() as s:
            # Registrations nobody connected are forgotten: anyone may register.
            used = exists().where(OAuthConnection.client_id == OAuthClient.id)
            s.execute(
                delete(OAuthClient).where(
                    OAuthClient.kind == "dcr", OAuthClient.created_at < cutoff, ~used
                )
            )
            row = OAuthClient(
                client_id="ocl_" + secrets.token_urlsafe(24),
                kind="dcr",
                secret_hash=secret_hash(secret) if secret else None,
                document=metadata,
                expires_at=None,
                **kept,
            )
            s.add(row)
            s.flush()
            return Client.of(row), secret

    def forget_document(self, client_id: str) -> None:
        """Fetch a document again at its next use (tests, and an operator's reset)."""
        with self.db.transaction() as s:
            s.execute(
                update(OAuthClient)
                .where(OAuthClient.client_id == client_id)
                .values(expires_at=utcnow())
            )

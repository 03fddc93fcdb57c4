"""The authorization server: authlib's Flask integration with our grants and endpoints.

Authorization code with PKCE (S256 only, required of every client), refresh tokens rotated at
each use, RFC 7009 revocation, RFC 7591 registration, RFC 9207's `iss` on every authorization
response, RFC 8707's `resource` bound into codes and tokens. Codes and refresh tokens are
taken with one conditional UPDATE, so two workers can never redeem one twice.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from authlib.integrations.flask_oauth2 import AuthorizationServer
from authlib.oauth2.rfc6749 import (
    AuthorizationCodeMixin,
    InvalidGrantError,
    InvalidRequestError,
    grants,
)
from authlib.oauth2.rfc7009 import RevocationEndpoint
from authlib.oauth2.rfc7591 import ClientRegistrationEndpoint, InvalidClientMetadataError
from authlib.oauth2.rfc7636 import CodeChallenge
from authlib.oauth2.rfc9207 import IssuerParameter
from sqlalchemy import func, select, update

from config import Settings
from models.base import utcnow
from models.connector import OAuthCode, OAuthConnection
from models.db import Database
from services.api_tokens import aware
from services.oauth.cimd import ClientRefused
from services.oauth.clients import SCOPES, Client, ClientStore, RunOnLoop
from services.oauth.tokens import (
    InvalidTarget,
    Owner,
    TokenStore,
    TokenView,
    resource_for,
    token_hash,
)

AUTH_METHODS = ["client_secret_basic", "client_secret_post", "none"]


class S256Only(CodeChallenge):  # type: ignore[misc]
    """PKCE required of every client, with S256: `plain` is refused (OAuth 2.1, MCP)."""

    DEFAULT_CODE_CHALLENGE_METHOD = "S256"
    SUPPORTED_CODE_CHALLENGE_METHOD = ["S256"]

    def validate_code_challenge(self, grant: Any, redirect_uri: str) -> None:
        data = grant.request.payload.data
        if not data.get("code_challenge"):
            raise InvalidRequestError(
                "PKCE is required: send code_challenge with code_challenge_method=S256.",
                redirect_uri=redirect_uri,
            )
        if data.get("code_challenge_method") != "S256":
            raise InvalidRequestError(
                "Only code_challenge_method=S256 is accepted; plain is refused.",
                redirect_uri=redirect_uri,
            )
        super().validate_code_challenge(grant, redirect_uri)


@dataclass(frozen=True)
class Code(AuthorizationCodeMixin):  # type: ignore[misc]
    """A taken authorization code as authlib's grant and PKCE check read it."""

    id: int
    user_id: int
    client_id: int
    redirect_uri: str
    scope: str
    resource: str
    code_challenge: str
    code_challenge_method: str
    created_at: datetime

    def get_redirect_uri(self) -> str:
        return self.redirect_uri

    def get_scope(self) -> str:
        return self.scope


class CodeGrant(grants.AuthorizationCodeGrant):  # type: ignore[misc]
    """Authorization codes: stored hashed, bound to the challenge and resource, used once."""

    TOKEN_ENDPOINT_AUTH_METHODS = AUTH_METHODS
    server: Server

    def validate_authorization_request(self) -> str:
        redirect_uri: str = super().validate_authorization_request()
        asked = self.request.payload.data.get("resource")
        try:
            self.request.resource = resource_for(asked, self.server.base())
        except InvalidTarget as err:
            err.redirect_uri = redirect_uri
            raise
        return redirect_uri

    def save_authorization_code(self, code: str, request: Any) -> None:
        owner: Owner = request.user
        data = request.payload.data
        lifetime = timedelta(seconds=self.server.settings.timings.oauth_code)
        with self.server.db.transaction() as s:
            s.add(
                OAuthCode(
                    code_hash=token_hash(code),
                    user_id=owner.user_id,
                    client_id=request.client.row_id,
                    redirect_uri=request.payload.redirect_uri or "",
                    scope=request.scope,
                    resource=request.resource,
                    code_challenge=data["code_challenge"],
                    code_challenge_method=data["code_challenge_method"],
                    expires_at=utcnow() + lifetime,
                )
            )

    def query_authorization_code(self, code: str, client: Client) -> Code | None:
        """Take the code for this exchange; a code taken before revokes what it gave."""
        now = utcnow()
        with self.server.db.transaction() as s:
            row = s.scalar(select(OAuthCode).where(OAuthCode.code_hash == token_hash(code)))
            if row is None or row.client_id != client.row_id:
                return None
            if row.used_at is not None:
                reused = row.id
                row = None
            else:
                taken = s.execute(
                    update(OAuthCode)
                    .where(OAuthCode.id == row.id, OAuthCode.used_at.is_(None))
                    .values(used_at=now)
                )
                reused = None
                expiry = aware(row.expires_at)
                if taken.rowcount != 1 or expiry is None or expiry <= now:  # type: ignore[attr-defined]
                    return None
                found = Code(
                    row.id,
                    row.user_id,
                    row.client_id,
                    row.redirect_uri,
                    row.scope,
                    row.resource,
                    row.code_challenge,
                    row.code_challenge_method,
                    row.created_at,
                )
        if reused is not None:
            self.server.tokens.revoke_code_tokens(reused)
            return None
        return found

    def delete_authorization_code(self, authorization_code: Code) -> None:
        """Nothing to do: the code was taken when it was looked up."""

    def authenticate_user(self, authorization_code: Code) -> Owner | None:
        code = authorization_code
        with self.server.db.read() as s:
            # Consent that a revocation of the same app followed no longer counts.
            revoked = s.scalar(
                select(func.max(OAuthConnection.revoked_at)).where(
                    OAuthConnection.user_id == code.user_id,
                    OAuthConnection.client_id == code.client_id,
                )
            )
        last = aware(revoked)
        created = aware(code.created_at)
        if last is not None and created is not None and last >= created:
            return None
        self.request.resource = code.resource
        self.request.code_id = code.id
        asked = self.request.form.get("resource")
        if asked is not None and resource_for(asked, self.server.base()) != code.resource:
            raise InvalidGrantError("The resource differs from the authorization request's.")
        return Owner(code.user_id, code.client_id)


class RefreshGrant(grants.RefreshTokenGrant):  # type: ignore[misc]
    """Refresh tokens: each works once and comes back rotated with the new access token."""

    TOKEN_ENDPOINT_AUTH_METHODS = AUTH_METHODS
    INCLUDE_NEW_REFRESH_TOKEN = True
    server: Server

    def authenticate_refresh_token(self, refresh_token: str) -> TokenView | None:
        taken = self.server.tokens.claim_refresh(refresh_token)
        if taken is not None:
            asked = self.request.form.get("resource")
            if asked is not None and resource_for(asked, self.server.base()) != taken.resource:
                raise InvalidGrantError("The resource differs from the one granted.")
            self.request.resource, self.request.code_id = taken.resource, taken.code_id
        return taken

    def authenticate_user(self, refresh_token: TokenView) -> Owner:
        return refresh_token.owner

    def revoke_old_credential(self, refresh_token: TokenView) -> None:
        """Nothing to do: the old pair was revoked when its refresh token was taken."""


class Revocation(RevocationEndpoint):  # type: ignore[misc]
    """RFC 7009: a client revokes one of its tokens."""

    CLIENT_AUTH_METHODS = AUTH_METHODS
    server: Server

    def query_token(self, token_string: str, token_type_hint: str | None) -> TokenView | None:
        return self.server.tokens.find(token_string, token_type_hint)

    def revoke_token(self, token: TokenView, request: Any) -> None:
        self.server.tokens.revoke(token.row_id)


class Registration(ClientRegistrationEndpoint):  # type: ignore[misc]
    """RFC 7591 dynamic registration, open to anyone (a registration grants nothing)."""

    server: Server

    def authenticate_token(self, request: Any) -> bool:
        return True

    def get_server_metadata(self) -> dict[str, Any]:
        # Scopes a client registers are not checked: the scope asked for at authorization is.
        meta = self.server.metadata()
        meta.pop("scopes_supported")
        return meta

    def generate_client_info(self, request: Any) -> dict[str, Any]:
        """Store the registration (it was validated); its id, and a secret for a
        confidential client, shown this once."""
        try:
            client, secret = self.server.clients.register(dict(request.payload.data))
        except ClientRefused as err:
            raise InvalidClientMetadataError(str(err)) from err
        request.registered = client
        info: dict[str, Any] = {
            "client_id": client.client_id,
            "client_id_issued_at": int(utcnow().timestamp()),
            "token_endpoint_auth_method": client.auth_method,
        }
        if secret is not None:
            info.update(client_secret=secret, client_secret_expires_at=0)
        return info

    def save_client(
        self, client_info: dict[str, Any], client_metadata: dict[str, Any], request: Any
    ) -> Client:
        registered: Client = request.registered
        return registered


class Issuer(IssuerParameter):  # type: ignore[misc]
    """RFC 9207: every authorization response names the issuer."""

    def __init__(self, base: Callable[[], str]) -> None:
        self.base = base

    def get_issuer(self) -> str:
        return self.base()


class Server(AuthorizationServer):  # type: ignore[misc]
    """Our authorization server, one per app; `base()` is the public origin of the request."""

    def __init__(
        self, db: Database, settings: Settings, on_loop: RunOnLoop, base: Callable[[], str]
    ) -> None:
        super().__init__()
        self.db, self.settings, self.base = db, settings, base
        t = settings.timings
        self.clients = ClientStore(db, t, settings.cimd_allow_loopback, on_loop)
        self.tokens = TokenStore(db, t)
        # Unknown scopes are ignored, not refused (RFC 6749 3.3): Client.get_allowed_scope.
        self.scopes_supported = None
        self.register_token_generator("default", self.tokens.generate)
        self.register_grant(CodeGrant, [S256Only(required=True)])
        self.register_grant(RefreshGrant)
        self.register_endpoint(Revocation)
        if settings.oauth_dynamic_registration:
            self.register_endpoint(Registration)
        self.register_extension(Issuer(base))

    def query_client(self, client_id: str) -> Client | None:
        return self.clients.get(client_id)

    def save_token(self, token: dict[str, Any], request: Any) -> None:
        owner: Owner = request.user
        self.tokens.save(token, owner, request.resource, getattr(request, "code_id", None))

    def metadata(self) -> dict[str, Any]:
        """RFC 8414 authorization server metadata, with the MCP spec's additions."""
        base = self.base()
        meta: dict[str, Any] = {
            "issuer": base,
            "authorization_endpoint": f"{base}/oauth/authorize",
            "token_endpoint": f"{base}/oauth/token",
            "revocation_endpoint": f"{base}/oauth/revoke",
            "scopes_supported": list(SCOPES),
            "response_types_supported": ["code"],
            "response_modes_supported": ["query"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_methods_supported": AUTH_METHODS,
            "revocation_endpoint_auth_methods_supported": AUTH_METHODS,
            "code_challenge_methods_supported": ["S256"],
            "client_id_metadata_document_supported": True,
            "authorization_response_iss_parameter_supported": True,
            "service_documentation": f"{base}/docs",
        }
        if self.settings.oauth_dynamic_registration:
            meta["registration_endpoint"] = f"{base}/oauth/register"
        return meta

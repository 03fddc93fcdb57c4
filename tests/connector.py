"""The connector as an app runs it, for tests: a client ID metadata document served over real
TLS on loopback, the consent form answered over HTTP, and the mcp SDK's own OAuth client."""

from __future__ import annotations

import base64
import datetime
import hashlib
import ipaddress
import json
import secrets
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from html.parser import HTMLParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx2
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)

# Where the test apps say they listen: never served, the redirect is read instead.
REDIRECT = "http://127.0.0.1:9/callback"


def _name(text: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, text)])


def make_tls(folder: Path) -> tuple[Path, Path, Path]:
    """A test CA and a certificate for localhost and 127.0.0.1 signed by it: (ca, cert, key)."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(_name("connector test CA"))
        .issuer_name(_name("connector test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name("localhost"))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    paths = folder / "ca.pem", folder / "cert.pem", folder / "key.pem"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return paths


@dataclass
class DocumentServer:
    """An https server on loopback answering each path with its document (or a status)."""

    port: int
    ca: Path
    documents: dict[str, Any] = field(default_factory=dict)
    fetches: list[str] = field(default_factory=list)

    def url(self, path: str) -> str:
        return f"https://localhost:{self.port}{path}"

    def client_document(self, path: str, name: str, redirect: str = REDIRECT) -> str:
        """Serve a client ID metadata document at `path`; return its URL (the client_id)."""
        url = self.url(path)
        self.documents[path] = {
            "client_id": url,
            "client_name": name,
            "redirect_uris": [redirect],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        }
        return url


@contextmanager
def document_server(folder: Path) -> Iterator[DocumentServer]:
    """Serve documents over TLS with a test CA (trust it with SSL_CERT_FILE=server.ca)."""
    ca, cert, key = make_tls(folder)
    served = DocumentServer(0, ca)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            served.fetches.append(self.path)
            found = served.documents.get(self.path)
            if isinstance(found, int):
                self.send_response(found)
                self.send_header("Location", "https://localhost/elsewhere.json")
                self.end_headers()
                return
            body = found if isinstance(found, bytes) else json.dumps(found).encode()
            self.send_response(200 if found is not None else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    served.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield served
    finally:
        httpd.shutdown()
        httpd.server_close()


class _Form(HTMLParser):
    """The consent form's fields, as a browser would submit them."""

    def __init__(self) -> None:
        super().__init__()
        self.fields: dict[str, str] = {}
        self.texts: dict[str, str] = {}
        self._open: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "input" and found.get("type") == "hidden" and found.get("name"):
            self.fields[str(found["name"])] = found.get("value") or ""
        self._open = found.get("id")

    def handle_data(self, data: str) -> None:
        if self._open:
            self.texts[self._open] = self.texts.get(self._open, "") + data

    def handle_endtag(self, tag: str) -> None:
        self._open = None


def consent_page(http: httpx2.Client, authorize_url: str) -> tuple[httpx2.Response, _Form]:
    """GET the consent page; return it and its form."""
    page = http.get(authorize_url)
    form = _Form()
    form.feed(page.text)
    return page, form


def consent(
    http: httpx2.Client, authorize_url: str, api_token: str, decision: str = "allow"
) -> dict[str, str]:
    """Answer the consent page as the user would; return the redirect's query parameters."""
    page, form = consent_page(http, authorize_url)
    assert page.status_code == 200, page.text
    base = f"{urlsplit(authorize_url).scheme}://{urlsplit(authorize_url).netloc}"
    answer = {**form.fields, "decision": decision, "api_token": api_token}
    reply = http.post(f"{base}/oauth/authorize", data=answer)
    assert reply.status_code == 302, reply.text
    return redirect_params(reply.headers["location"])


def redirect_params(location: str) -> dict[str, str]:
    """The query parameters of a redirect to the app."""
    return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}


class Memory:
    """The SDK's token storage, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


@dataclass
class App:
    """An app (claude.ai, ChatGPT...) as the mcp SDK's OAuth client plays it."""

    server_url: str
    api_token: str
    client_metadata_url: str | None = None
    name: str = "Test connector"
    scope: str | None = None
    storage: Memory = field(default_factory=Memory)
    consents: list[dict[str, str]] = field(default_factory=list)

    def auth(self) -> OAuthClientProvider:
        metadata = OAuthClientMetadata(
            client_name=self.name,
            redirect_uris=[REDIRECT],  # type: ignore[list-item]
            grant_types=["authorization_code", "refresh_token"],
            token_endpoint_auth_method="none",
            scope=self.scope,
        )
        found: dict[str, str] = {}

        async def redirect(url: str) -> None:
            with httpx2.Client(timeout=30) as http:
                found.update(consent(http, url, self.api_token))
            self.consents.append(dict(found))

        async def callback() -> AuthorizationCodeResult:
            return AuthorizationCodeResult(
                code=found["code"], state=found.get("state"), iss=found.get("iss")
            )

        return OAuthClientProvider(
            self.server_url,
            metadata,
            self.storage,
            redirect_handler=redirect,
            callback_handler=callback,
            client_metadata_url=self.client_metadata_url,
        )

    def client(self, mode: str = "auto", **kwargs: Any) -> Client:
        """An MCP client session that signs in as the app does (`mode`: the SDK's)."""
        http = httpx2.AsyncClient(auth=self.auth(), timeout=30)
        transport = streamable_http_client(self.server_url, http_client=http)
        return Client(transport, mode=mode, cache=None, **kwargs)


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).decode().rstrip("=")


def register(live: Any, **extra: Any) -> dict[str, Any]:
    body = {"client_name": "Raw app", "redirect_uris": [REDIRECT], **extra}
    body.setdefault("token_endpoint_auth_method", "none")
    body.setdefault("grant_types", ["authorization_code", "refresh_token"])
    made = httpx2.post(f"{live.url}/oauth/register", json=body, timeout=10)
    assert made.status_code == 201, made.text
    answer: dict[str, Any] = made.json()
    return answer


def authorize_url(live: Any, client_id: str, challenge: str, **extra: str) -> str:
    query = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT,
        "state": "s1",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "resource": f"{live.url}/mcp",
        **extra,
    }
    return f"{live.url}/oauth/authorize?{urlencode(query)}"


def tokens_for(live: Any, token: str, client_id: str, **extra: str) -> httpx2.Response:
    """The whole code flow by hand: consent, then the token request."""
    verifier, challenge = pkce()
    with httpx2.Client(timeout=10) as http:
        back = consent(http, authorize_url(live, client_id, challenge, **extra), token)
    body = {
        "grant_type": "authorization_code",
        "code": back["code"],
        "redirect_uri": REDIRECT,
        "client_id": client_id,
        "code_verifier": verifier,
        "resource": f"{live.url}/mcp",
    }
    return httpx2.post(f"{live.url}/oauth/token", data=body, timeout=10)

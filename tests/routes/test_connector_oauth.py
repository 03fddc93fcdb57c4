"""The connector's OAuth 2.1 as apps run it: discovery, client ID metadata documents (over
real TLS) and dynamic registration, PKCE (S256 only), consent, tokens bound to /mcp,
refresh rotation, revocation; the SDK's own OAuth client plays the app."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx2
import pytest
from authlib.oauth2.rfc8414 import AuthorizationServerMetadata

from demo_data.generator import seed_finance
from tests.conftest import make_user
from tests.connector import (
    REDIRECT,
    App,
    DocumentServer,
    authorize_url,
    consent,
    consent_page,
    document_server,
    pkce,
    register,
    tokens_for,
)
from tests.live import LiveServer


@pytest.fixture
def docs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[DocumentServer]:
    """An https server for client ID metadata documents, its CA trusted by the fetch."""
    with document_server(tmp_path) as served:
        monkeypatch.setenv("SSL_CERT_FILE", str(served.ca))
        yield served


@pytest.fixture
def connector(app_config: dict[str, Any], user: tuple[int, str]) -> Iterator[LiveServer]:
    """The app (documents may come from loopback, as the test's do), with alice's finances."""
    from app import create_app

    app = create_app({**app_config, "CIMD_ALLOW_LOOPBACK": True})
    seed_finance(app.extensions["db"], user[0], months=2, seed=5)
    server = LiveServer(app, user[1])
    yield server
    server.close()
    app.extensions["engine"].close()
    app.extensions["db"].dispose()


def mcp_post(live: LiveServer, token: str, method: str = "tools/list") -> httpx2.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {}}
    auth = {"Authorization": f"Bearer {token}"}
    return httpx2.post(f"{live.url}/mcp", json=body, headers=auth, timeout=10)


async def balances(app: App) -> tuple[list[str], Any]:
    async with app.client() as client:
        listed = await client.list_tools()
        result = await client.call_tool("get_account_balances", {})
        return [t.name for t in listed.tools], result


def test_discovery_401_challenge_and_both_metadata_documents(connector: LiveServer) -> None:
    base = connector.url
    reply = httpx2.post(f"{base}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert reply.status_code == 401
    challenge = reply.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    assert f'resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"' in challenge
    assert reply.json()["error"]["code"] == "unauthorized"  # the API's one shape still
    for path in (
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ):
        prm = httpx2.get(base + path).json()
        assert prm["resource"] == f"{base}/mcp" and prm["authorization_servers"] == [base]
    meta = httpx2.get(f"{base}/.well-known/oauth-authorization-server").json()
    assert meta["issuer"] == base
    assert meta["code_challenge_methods_supported"] == ["S256"]
    assert meta["client_id_metadata_document_supported"] is True
    assert meta["authorization_response_iss_parameter_supported"] is True
    assert "none" in meta["token_endpoint_auth_methods_supported"]
    # A token that is not one: 401 naming the error, for the app to sign in again.
    bad = mcp_post(connector, "cba_not-a-token")
    assert bad.status_code == 401 and 'error="invalid_token"' in bad.headers["www-authenticate"]


def test_the_metadata_is_valid_rfc_8414_at_a_public_https_url(
    app_config: dict[str, Any],
) -> None:
    from app import create_app

    app = create_app({**app_config, "PUBLIC_URL": "https://finance.example.com/"})
    try:
        meta = app.test_client().get("/.well-known/oauth-authorization-server").json
        AuthorizationServerMetadata(meta).validate()  # raises on any field RFC 8414 refuses
        assert meta["token_endpoint"] == "https://finance.example.com/oauth/token"
        prm = app.test_client().get("/.well-known/oauth-protected-resource/mcp").json
        assert prm["resource"] == "https://finance.example.com/mcp"
    finally:
        app.extensions["engine"].close()
        app.extensions["db"].dispose()


def test_a_metadata_document_app_runs_the_whole_flow_with_the_users_own_figures(
    connector: LiveServer, docs: DocumentServer, user: tuple[int, str]
) -> None:
    url = docs.client_document("/oauth/claude.json", "Claude <b>test</b>")
    app = App(f"{connector.url}/mcp", user[1], client_metadata_url=url)
    names, mine = asyncio.run(balances(app))
    assert "get_account_balances" in names and "set_budget" in names
    accounts = json.loads(mine.content[0].text)["accounts"]
    assert accounts and not mine.is_error
    assert docs.fetches == ["/oauth/claude.json"]  # fetched once, then kept
    [back] = app.consents
    assert back["iss"] == connector.url  # RFC 9207
    listed = connector.get("/api/connected-apps").json()["apps"]
    assert [(a["name"], a["client_id"], a["scopes"]) for a in listed] == [
        ("Claude <b>test</b>", url, ["read", "write"])
    ]
    assert listed[0]["registration"] == "metadata document" and listed[0]["last_used_at"]
    # Bob connects the same app: he sees his figures, never alice's.
    db = connector.app.extensions["db"]
    bob = make_user(db, "bob")
    _, theirs = asyncio.run(balances(App(f"{connector.url}/mcp", bob[1], client_metadata_url=url)))
    assert json.loads(theirs.content[0].text)["accounts"] == []


def test_the_consent_page_names_the_client_and_its_redirect_host_as_text(
    connector: LiveServer, docs: DocumentServer
) -> None:
    url = docs.client_document("/app.json", '<script>alert("x")</script> Evil', REDIRECT)
    _, challenge = pkce()
    with httpx2.Client(timeout=10) as http:
        page, form = consent_page(http, authorize_url(connector, url, challenge))
    assert page.status_code == 200
    assert form.texts["client-name"] == '<script>alert("x")</script> Evil'
    assert "<script>alert" not in page.text  # escaped, never markup
    assert form.texts["redirect-host"] == "127.0.0.1"
    assert "loopback-warning" in form.texts  # a localhost redirect is flagged
    policy = page.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in policy and "form-action 'self' http://127.0.0.1:9" in policy
    assert form.fields["code_challenge"] == challenge and form.fields["client_id"] == url


def test_a_wrong_token_or_deny_grants_nothing(connector: LiveServer, user: tuple[int, str]) -> None:
    client = register(connector)
    _, challenge = pkce()
    url = authorize_url(connector, client["client_id"], challenge)
    with httpx2.Client(timeout=10) as http:
        _, form = consent_page(http, url)
        wrong = http.post(
            f"{connector.url}/oauth/authorize",
            data={**form.fields, "decision": "allow", "api_token": "cbt_wrong"},
        )
        assert wrong.status_code == 400 and "consent-error" in wrong.text
        denied = consent(http, url, "", decision="deny")
    assert denied["error"] == "access_denied" and denied["state"] == "s1"
    assert denied["iss"] == connector.url
    assert connector.get("/api/connected-apps").json()["apps"] == []


def test_plain_pkce_and_no_pkce_are_refused(connector: LiveServer) -> None:
    client = register(connector)
    for extra in (
        {"code_challenge_method": "plain"},
        {"code_challenge": ""},
    ):
        url = authorize_url(connector, client["client_id"], "x" * 43, **extra)
        reply = httpx2.get(url, timeout=10)
        assert reply.status_code == 302
        location = reply.headers["location"]
        assert location.startswith(REDIRECT) and "error=invalid_request" in location
        assert "iss=" in location


def test_parameters_outside_printable_ascii_are_refused_as_invalid_request(
    connector: LiveServer,
) -> None:
    client = register(connector)
    url = authorize_url(connector, client["client_id"], "x" * 43, response_type="3\u00d12\u00ae")
    page = httpx2.get(url, timeout=10)
    assert page.status_code == 400 and "invalid_request" in page.text
    assert "\u00d1" not in page.text and "location" not in page.headers
    for path, form in (
        ("/oauth/token", {"grant_type": "authorization_code\u00e1"}),
        ("/oauth/revoke", {"token": "t\u00f0"}),
    ):
        reply = httpx2.post(f"{connector.url}{path}", data=form, timeout=10)
        assert reply.status_code == 400, path
        assert reply.json()["error"] == "invalid_request"


def test_dynamic_registration_refusals(connector: LiveServer) -> None:
    for body in (
        {"client_name": "x", "redirect_uris": ["http://evil.example/cb"]},
        {"client_name": "x", "redirect_uris": []},
        {"client_name": "x", "redirect_uris": [REDIRECT], "grant_types": ["password"]},
    ):
        reply = httpx2.post(f"{connector.url}/oauth/register", json=body, timeout=10)
        assert reply.status_code == 400, body
        assert reply.json()["error"] == "invalid_client_metadata"
    confidential = register(connector, token_endpoint_auth_method="client_secret_post")
    assert confidential["client_secret"].startswith("ocs_")
    public = register(connector)
    assert "client_secret" not in public and public["token_endpoint_auth_method"] == "none"


def test_a_token_for_another_resource_is_refused(
    connector: LiveServer, app_config: dict[str, Any], user: tuple[int, str]
) -> None:
    client = register(connector)
    _, challenge = pkce()
    url = authorize_url(
        connector, client["client_id"], challenge, resource="https://other.example/mcp"
    )
    refused = httpx2.get(url, timeout=10)  # refused before the page: sent back at once
    assert "error=invalid_target" in refused.headers["location"]
    # A token bound to this server as it was reached before (another origin): refused.
    issued = tokens_for(connector, user[1], client["client_id"]).json()
    assert mcp_post(connector, issued["access_token"]).status_code == 200
    from app import create_app

    moved = create_app({**app_config, "PUBLIC_URL": "https://finance.example.com"})
    try:
        elsewhere = LiveServer(moved, user[1])
        try:
            reply = mcp_post(elsewhere, issued["access_token"])
            assert reply.status_code == 401
            assert reply.json()["error"]["message"] == (
                "The access token was issued for another resource."
            )
        finally:
            elsewhere.close()
    finally:
        moved.extensions["engine"].close()
        moved.extensions["db"].dispose()


def test_refresh_rotates_and_a_replayed_refresh_token_ends_the_connection(
    connector: LiveServer, user: tuple[int, str]
) -> None:
    client = register(connector)
    first = tokens_for(connector, user[1], client["client_id"])
    assert first.headers["cache-control"] == "no-store"
    pair = first.json()
    assert pair["scope"] == "read write" and pair["refresh_token"].startswith("cbr_")

    def refresh(token: str) -> httpx2.Response:
        body = {
            "grant_type": "refresh_token",
            "refresh_token": token,
            "client_id": client["client_id"],
        }
        return httpx2.post(f"{connector.url}/oauth/token", data=body, timeout=10)

    second = refresh(pair["refresh_token"]).json()
    assert second["refresh_token"] != pair["refresh_token"]  # rotated
    assert mcp_post(connector, pair["access_token"]).status_code == 401  # the old pair is gone
    assert mcp_post(connector, second["access_token"]).status_code == 200
    replay = refresh(pair["refresh_token"])
    assert replay.status_code == 400 and replay.json()["error"] == "invalid_grant"
    # A used refresh token came back: stolen, perhaps. Everything of that connection ends.
    assert mcp_post(connector, second["access_token"]).status_code == 401
    assert refresh(second["refresh_token"]).status_code == 400
    assert connector.get("/api/connected-apps").json()["apps"] == []


def test_a_code_works_once(connector: LiveServer, user: tuple[int, str]) -> None:
    client = register(connector)
    verifier, challenge = pkce()
    with httpx2.Client(timeout=10) as http:
        back = consent(http, authorize_url(connector, client["client_id"], challenge), user[1])
    body = {
        "grant_type": "authorization_code",
        "code": back["code"],
        "redirect_uri": REDIRECT,
        "client_id": client["client_id"],
    }
    wrong = httpx2.post(f"{connector.url}/oauth/token", data={**body, "code_verifier": "v" * 43})
    assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"
    again = httpx2.post(f"{connector.url}/oauth/token", data={**body, "code_verifier": verifier})
    assert again.status_code == 400  # taken by the first try, whatever its verifier


def test_revoking_an_app_or_a_token_ends_its_access_at_once(
    connector: LiveServer, user: tuple[int, str]
) -> None:
    client = register(connector)
    pair = tokens_for(connector, user[1], client["client_id"]).json()
    assert mcp_post(connector, pair["access_token"]).status_code == 200
    [listed] = connector.get("/api/connected-apps").json()["apps"]
    assert listed["name"] == "Raw app" and listed["redirect_hosts"] == ["127.0.0.1"]
    assert connector.http.delete(f"/api/connected-apps/{listed['id']}").status_code == 204
    assert mcp_post(connector, pair["access_token"]).status_code == 401
    assert connector.http.delete(f"/api/connected-apps/{listed['id']}").status_code == 404
    # RFC 7009: the app revokes its own token.
    other = tokens_for(connector, user[1], client["client_id"]).json()
    body = {"token": other["access_token"], "client_id": client["client_id"]}
    assert httpx2.post(f"{connector.url}/oauth/revoke", data=body).status_code == 200
    assert mcp_post(connector, other["access_token"]).status_code == 401


@pytest.mark.parametrize(
    ("document", "said"),
    [
        ("mismatch", "is not the URL it was fetched from"),
        ("redirect", "answered 302"),
        ("huge", "is over 5120 bytes"),
        ("secret", "holds no client secret"),
        ("http-redirect-uri", "Redirect URIs must use https"),
    ],
)
def test_unusable_metadata_documents_are_refused_with_a_reason(
    connector: LiveServer, docs: DocumentServer, document: str, said: str
) -> None:
    url = docs.client_document("/doc.json", "Doc")
    served = docs.documents["/doc.json"]
    if document == "mismatch":
        served["client_id"] = docs.url("/other.json")
    elif document == "redirect":
        docs.documents["/doc.json"] = 302
    elif document == "huge":
        served["padding"] = "x" * 6000
    elif document == "secret":
        served["client_secret"] = "s"
    else:
        served["redirect_uris"] = ["http://example.com/cb"]
    _, challenge = pkce()
    reply = httpx2.get(authorize_url(connector, url, challenge), timeout=10)
    assert reply.status_code == 400
    assert said in reply.text and "invalid_client" in reply.text


def test_documents_on_private_addresses_are_not_fetched(
    app_config: dict[str, Any], docs: DocumentServer
) -> None:
    from app import create_app

    app = create_app(app_config)  # CIMD_ALLOW_LOOPBACK off, as in production
    try:
        client = app.test_client()
        for url in (docs.client_document("/a.json", "A"), "https://127.0.0.1:1/a.json"):
            _, challenge = pkce()
            query = {"response_type": "code", "client_id": url, "code_challenge": challenge}
            reply = client.get(f"/oauth/authorize?{urlencode(query)}")
            assert reply.status_code == 400
            assert "is not a public address" in reply.text
        assert docs.fetches == []
    finally:
        app.extensions["engine"].close()
        app.extensions["db"].dispose()

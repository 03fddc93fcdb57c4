"""The connector's consent in a real browser: signed in to the chat, the user opens an app's
authorization link, sees the app and where it goes back to, allows it; the app's callback gets
the code, its token reads the user's figures over /mcp, and the page lists the app."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import httpx2
import pytest

from tests.browser.page import ChatPage
from tests.connector import authorize_url, pkce, redirect_params
from tests.live import LiveServer

pytestmark = pytest.mark.browser


@pytest.fixture
def callback() -> Iterator[tuple[str, list[str]]]:
    """An app's loopback redirect URI, and the requests it got."""
    got: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            got.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            self.wfile.write(b"You can close this tab.")

        def log_message(self, *args: Any) -> None:
            pass

    httpd = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/callback", got
    httpd.shutdown()
    httpd.server_close()


def test_consent_in_a_browser_then_tools_over_mcp_and_the_app_in_the_page(
    serve: Callable[..., LiveServer], page: ChatPage, callback: tuple[str, list[str]]
) -> None:
    server = serve()
    redirect, got = callback
    name = "Claude <img src=x onerror=alert(1)>"
    made = httpx2.post(
        f"{server.url}/oauth/register",
        json={
            "client_name": name,
            "redirect_uris": [redirect],
            "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"],
        },
    ).json()
    token = server.headers["Authorization"].split()[1]
    page.open(f"{server.url}/#token={token}")  # signed in, as the page signs in
    verifier, challenge = pkce()
    page.driver.get(authorize_url(server, made["client_id"], challenge, redirect_uri=redirect))
    page.wait(lambda: page.js("return document.getElementById('allow') !== null"), what="consent")
    shown = page.js(
        "return {name: document.getElementById('client-name').textContent,"
        " host: document.getElementById('redirect-host').textContent,"
        " filled: document.getElementById('api-token').value !== '',"
        " signedIn: !document.getElementById('signed-in').hidden,"
        " images: document.images.length}"
    )
    assert shown == {
        "name": name,  # as text: never markup
        "host": "127.0.0.1",
        "filled": True,
        "signedIn": True,
        "images": 0,
    }
    page.screenshot("connector-consent")
    page.click("#allow")
    page.wait(lambda: got, what="the app's callback")
    back = redirect_params(got[0])
    assert back["state"] == "s1" and back["iss"] == server.url
    issued = httpx2.post(
        f"{server.url}/oauth/token",
        data={
            "grant_type": "authorization_code",
            "code": back["code"],
            "redirect_uri": redirect,
            "client_id": made["client_id"],
            "code_verifier": verifier,
        },
    ).json()
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "get_account_balances", "arguments": {}},
    }
    reply = httpx2.post(
        f"{server.url}/mcp",
        json=call,
        headers={"Authorization": f"Bearer {issued['access_token']}"},
    ).json()
    assert json.loads(reply["result"]["content"][0]["text"])["accounts"]
    # The page lists the app; Revoke ends its access.
    page.open(f"{server.url}/")
    page.click("#apps-open")
    page.wait(
        lambda: page.js("return document.querySelector('#apps-panel .app-name')"), what="apps"
    )
    assert page.js("return document.querySelector('#apps-panel .app-name').textContent") == name
    page.click("#apps-panel .revoke-app")
    page.wait(
        lambda: page.js("return document.querySelector('#apps-panel .app-name') === null"),
        what="the app to go",
    )
    again = httpx2.post(
        f"{server.url}/mcp",
        json=call,
        headers={"Authorization": f"Bearer {issued['access_token']}"},
    )
    assert again.status_code == 401
    assert page.console_errors() == []

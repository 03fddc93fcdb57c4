"""Every HTML page (the chat page, /docs) and the files they load carry a policy that runs only
the project's own scripts, forbids framing, sniffing and referrers."""

from __future__ import annotations

import re
from typing import Any

import pytest

# One app for the module's tests, its database emptied after each (tests/conftest.py).
pytestmark = pytest.mark.shared_app

PAGES = ["/", "/docs"]
FILES = [
    "/web/js/main.js",
    "/web/js/docs.js",
    "/web/js/protocol.js",
    "/web/css/theme.css",
    "/web/css/consent.css",
    "/web/vendor/swagger-ui/swagger-ui-bundle.js",
]


def policy(response: Any) -> dict[str, str]:
    """The Content-Security-Policy's directives by name."""
    directives = response.headers["Content-Security-Policy"].split(";")
    return {name: value for name, _, value in (d.strip().partition(" ") for d in directives)}


@pytest.mark.parametrize("path", PAGES + FILES)
def test_pages_and_their_files_carry_the_policy_headers(client: Any, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 200
    csp = policy(response)
    assert csp["default-src"] == "'none'"
    assert csp["script-src"] == "'self'"  # no inline script, no eval, no other origin
    assert csp["frame-ancestors"] == "'none'" and csp["base-uri"] == "'none'"
    assert "'unsafe-inline'" not in csp.get("style-src", "")
    assert response.headers["X-Frame-Options"] == "DENY"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"] == "no-referrer"


@pytest.mark.parametrize("path", PAGES)
def test_pages_run_no_inline_script(client: Any, path: str) -> None:
    html = client.get(path).get_data(as_text=True)
    scripts = re.findall(r"<script\b([^>]*)>(.*?)</script>", html, re.DOTALL)
    assert scripts and all('src="/web/' in attrs and not body.strip() for attrs, body in scripts)
    assert "cdn" not in html.lower()

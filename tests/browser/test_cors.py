"""CORS_ORIGINS lets web apps on those origins (and no others) use the API and event streams."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


class _Blank(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"<!doctype html><title>another web app</title>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class Origin:
    """A loopback web server standing in for a web app on another origin."""

    def __init__(self) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Blank)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def origins() -> Iterator[tuple[Origin, Origin]]:
    """Two other origins: one the app allows, one it does not."""
    pair = Origin(), Origin()
    yield pair
    for origin in pair:
        origin.close()


ALLOWED_APP = """
const [api, token, done] = arguments;
const auth = {Authorization: `Bearer ${token}`};
const json = {...auth, 'Content-Type': 'application/json'};
const out = {};
try {
  const created = await fetch(`${api}/api/sessions`, {method: 'POST', headers: json});
  const session = await created.json();
  const started = await fetch(`${api}/api/sessions/${session.id}/turns`, {
    method: 'POST', headers: json, body: JSON.stringify({message: 'What are my balances?'})});
  const turn = await started.json();
  out.started = started.status;
  out.events = await new Promise((resolve) => {
    const seen = [];
    const source = new EventSource(api + turn.events_url);
    for (const type of ['turn_start', 'message_start', 'tool_result', 'turn_end']) {
      source.addEventListener(type, (event) => {
        seen.push(type);
        if (type === 'turn_end') { source.close(); resolve(seen); }
      });
    }
    source.onerror = () => { source.close(); resolve([...seen, 'error']); };
  });
  const resumed = await fetch(api + turn.events_url, {headers: {'Last-Event-ID': '2'}});
  out.resumed = [resumed.status, (await resumed.text()).split('\\n')[0]];
  const chat = await fetch(`${api}/api/chat/stream`, {method: 'POST', headers: json,
    body: JSON.stringify({message: 'And my budgets?', session_id: session.id})});
  out.chatTurn = chat.headers.get('X-Turn-Id');
  await chat.text();
  const renamed = await fetch(`${api}/api/sessions/${session.id}`, {
    method: 'PATCH', headers: json, body: JSON.stringify({title: 'Renamed cross-origin'})});
  out.renamed = renamed.status;
  const missing = await fetch(`${api}/api/sessions/nope`, {headers: auth});
  out.error = [missing.status, (await missing.json()).error.code];
} catch (err) {
  out.failure = String(err);
}
done(out);
"""

DENIED_APP = """
const [api, token, eventsUrl, done] = arguments;
const out = {};
try {
  await fetch(`${api}/api/sessions`, {headers: {Authorization: `Bearer ${token}`}});
  out.fetch = 'allowed';
} catch (err) {
  out.fetch = err.name;
}
out.events = await new Promise((resolve) => {
  const source = new EventSource(api + eventsUrl);
  source.addEventListener('turn_start', () => { source.close(); resolve('read'); });
  source.onerror = () => { source.close(); resolve('blocked'); };
});
done(out);
"""


def test_a_web_app_on_an_allowed_origin_uses_the_api(
    serve: Any, origins: tuple[Origin, Origin], driver: Any
) -> None:
    allowed, denied = origins
    server = serve(CORS_ORIGINS=[allowed.url])
    token = server.headers["Authorization"][7:]

    driver.get(allowed.url)
    out = driver.execute_async_script(ALLOWED_APP, server.url, token)
    assert "failure" not in out, out
    assert out["started"] == 202
    assert out["events"][0] == "turn_start" and out["events"][-1] == "turn_end"
    assert "tool_result" in out["events"]
    assert out["resumed"] == [200, "id: 3"]  # Last-Event-ID passes the preflight
    assert out["chatTurn"].startswith("turn_")  # X-Turn-Id is exposed
    assert out["error"] == [404, "not_found"]  # errors are readable too
    assert out["renamed"] == 200  # PATCH passes the preflight

    session = server.get("/api/sessions").json()["sessions"][0]
    turn = server.post(f"/api/sessions/{session['id']}/turns", json={"message": "Hi"}).json()
    driver.get(denied.url)
    out = driver.execute_async_script(DENIED_APP, server.url, token, turn["events_url"])
    assert out == {"fetch": "TypeError", "events": "blocked"}


def _preflight(server: Any, origin: str, path: str, headers: str) -> Any:
    return server.http.options(
        path,
        headers={
            "Origin": origin,
            "Access-Control-Request-Method": "POST" if "content-type" in headers else "GET",
            "Access-Control-Request-Headers": headers,
        },
    )


def test_preflights_answer_listed_origins_only(serve: Any) -> None:
    listed, other = "http://app.example", "http://evil.example"
    server = serve(CORS_ORIGINS=[listed, "http://second.example"])

    ok = _preflight(server, listed, "/api/sessions", "authorization,content-type")
    assert ok.status_code == 200
    assert ok.headers["access-control-allow-origin"] == listed
    assert {"authorization", "content-type"} <= set(
        ok.headers["access-control-allow-headers"].lower().split(", ")
    )
    follow = _preflight(server, listed, "/api/turns/x/events", "last-event-id")
    assert follow.headers["access-control-allow-headers"].lower() == "last-event-id"

    refused = _preflight(server, other, "/api/sessions", "authorization")
    assert "access-control-allow-origin" not in refused.headers
    plain = server.get("/api/sessions", headers={"Origin": other})
    assert "access-control-allow-origin" not in plain.headers
    page = server.get("/", headers={"Origin": listed})
    assert "access-control-allow-origin" not in page.headers  # the API only


def test_no_cors_by_default(serve: Any) -> None:
    server = serve()
    response = server.get("/api/sessions", headers={"Origin": "http://app.example"})
    assert response.status_code == 200
    assert "access-control-allow-origin" not in response.headers
    refused = _preflight(server, "http://app.example", "/api/sessions", "authorization")
    assert "access-control-allow-origin" not in refused.headers

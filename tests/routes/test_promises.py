"""Promises the API makes, held against the live server: errors, bodies, ids, pages, charsets."""

from __future__ import annotations

import json
import re
import socket
from typing import Any

import httpx2
import pytest
from jsonschema import Draft202012Validator
from sqlalchemy import delete

from models.chat import TurnEvents
from tests.live import LiveServer, decode, events_only
from tests.routes.test_turns_http import finished_turn


def raw_request(
    live: LiveServer, data: bytes, wait: float = 10
) -> tuple[int, dict[str, str], bytes]:
    """Send raw bytes; return the status, headers and body of the answer."""
    with socket.create_connection(("127.0.0.1", live.port), timeout=wait) as sock:
        sock.sendall(data)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), headers, body


def assert_error_shape(headers: dict[str, str], body: bytes, status: int, code: str) -> None:
    """The answer is the one JSON error shape with `code`."""
    assert headers["content-type"].startswith("application/json"), (status, body)
    error = json.loads(body)["error"]
    assert error["code"] == code and error["message"] and error["details"] == {}


@pytest.mark.parametrize(
    ("name", "data", "status", "code"),
    [
        ("long url", b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414, "uri_too_long"),
        (
            "big headers",
            b"GET / HTTP/1.1\r\nHost: x\r\n" + b"X-Big: " + b"b" * 40_000 + b"\r\n\r\n",
            431,
            "request_header_fields_too_large",
        ),
        ("bad request line", b"GARBAGE\r\n\r\n", 400, "bad_request"),
        (
            "negative content-length",
            b"POST /api/sessions HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
            400,
            "bad_request",
        ),
    ],
)
def test_the_http_servers_own_errors_are_json(
    live: LiveServer, name: str, data: bytes, status: int, code: str
) -> None:
    got, headers, body = raw_request(live, data)
    assert got == status, body
    assert_error_shape(headers, body, status, code)


def test_a_chunked_body_over_the_limit_is_413(live: LiveServer) -> None:
    def chunks() -> Any:
        for _ in range(40):
            yield b"x" * 10_000

    response = live.post(
        "/api/chat/stream", content=chunks(), headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "request_too_large"


def test_a_body_that_never_arrives_is_408_within_the_body_timeout(
    app_config: dict[str, Any], user: Any
) -> None:
    from app import create_app

    app = create_app({**app_config, "TIME_SCALE": 0.05})  # body timeout 0.5 s, all scaled
    server = LiveServer(app, user[1])
    try:
        head = (
            b"POST /api/sessions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Authorization: Bearer " + user[1].encode() + b"\r\nContent-Length: 100\r\n\r\n"
        )
        # Read with a patience far past the scaled body timeout (0.5 s) and short of the
        # unscaled one (10 s): the 408 must come from the scaled deadline.
        status, headers, body = raw_request(server, head + b"0123456789", wait=5)
        assert status == 408
        assert_error_shape(headers, body, 408, "request_timeout")
    finally:
        server.close()
        app.extensions["engine"].close()


@pytest.mark.parametrize("value", ["1_0", "10" * 13, "+1", "1 ", " 1", "1\n", "0x1", "\u0661"])
def test_event_ids_are_digits_only(live: LiveServer, value: str) -> None:
    turn, _ = finished_turn(live)
    path = f"/api/turns/{turn['turn_id']}/events"
    tries: list[tuple[dict[str, str], dict[str, str]]] = [({"last_event_id": value}, {})]
    if value.isascii() and value.strip() == value:
        tries.append(({}, {"Last-Event-ID": value}))
    for params, headers in tries:
        response = live.http.get(path, params=params, headers=headers)
        assert response.status_code == 422, (value, response.text)
        assert response.json()["error"]["code"] == "validation_error"


def test_an_event_id_past_the_end_is_416(live: LiveServer) -> None:
    turn, raw = finished_turn(live)
    last = decode(events_only(raw))[-1][0]
    path = f"/api/turns/{turn['turn_id']}/events"
    assert live.http.get(path, headers={"Last-Event-ID": str(last)}).status_code == 204
    for value in (str(last + 1), "9" * 18):
        response = live.http.get(path, params={"last_event_id": value})
        assert response.status_code == 416
        error = response.json()["error"]
        assert error["code"] == "last_event_id_out_of_range"
        assert error["details"]["last_available"] == last


def test_a_turn_rebuilt_from_storage_serves_any_position_with_a_reset(live: LiveServer) -> None:
    turn, _ = finished_turn(live)
    with live.app.extensions["db"].transaction() as s:
        s.execute(delete(TurnEvents).where(TurnEvents.turn_id == turn["turn_id"]))
    live.app.extensions["turns"].reader.events._logs.pop(turn["turn_id"])  # the live log is gone
    path = f"/api/turns/{turn['turn_id']}/events"
    response = live.http.get(path, headers={"Last-Event-ID": "1000"})
    assert response.status_code == 200
    first = decode(response.content)[0]
    assert first[0] == 1001 and first[1] == "turn_start" and first[2]["reset"] is True


@pytest.mark.parametrize("limit", ["-1", "0", "101", "x", "1.5"])
def test_bad_page_limits_are_422(live: LiveServer, limit: str) -> None:
    response = live.get("/api/sessions", params={"limit": limit})
    assert response.status_code == 422 and "limit" in response.json()["error"]["details"]


def test_sessions_and_messages_come_a_page_at_a_time(live: LiveServer) -> None:
    walk_pages(live)


def test_session_pages_on_postgres(app_config: dict[str, Any], tmp_path: Any) -> None:
    from app import create_app
    from tests.backends import migrated_postgres
    from tests.conftest import make_user

    with migrated_postgres() as url:
        app = create_app({**app_config, "DATABASE_URL": url})
        server = LiveServer(app, make_user(app.extensions["db"], "pg")[1])
        try:
            walk_pages(server)
        finally:
            server.close()
            app.extensions["engine"].close()
            app.extensions["db"].dispose()


def walk_pages(live: LiveServer) -> None:
    """Five sessions two at a time, a turn's messages one at a time, and bad cursors."""
    made = [live.post("/api/sessions", json={"title": f"s{i}"}).json()["id"] for i in range(5)]
    seen, cursor = [], None
    while True:
        params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        page = live.get("/api/sessions", params=params).json()
        assert len(page["sessions"]) <= 2
        seen += [s["id"] for s in page["sessions"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == made[::-1]
    turn, _ = finished_turn(live)
    stored = live.get(f"/api/sessions/{turn['session_id']}").json()["messages"]
    path, paged, cursor = f"/api/sessions/{turn['session_id']}/messages", [], None
    while True:
        page = live.get(path, params={"limit": 1, **({"cursor": cursor} if cursor else {})}).json()
        paged += page["messages"]
        if (cursor := page["next_cursor"]) is None:
            break
    assert paged == stored and len(paged) > 1
    for wrong in ("abc", "1.x", "-1", "1" * 16):
        response = live.get(path, params={"cursor": wrong})
        assert response.status_code == 422 and "cursor" in response.json()["error"]["details"]
    gone = live.get("/api/sessions", params={"cursor": "1.ses_gone"}).json()
    assert gone == {"sessions": [], "next_cursor": None, "partial": False}  # an empty page


def test_json_must_be_utf_8(live: LiveServer) -> None:
    body = json.dumps({"title": "café"}).encode("latin-1", "replace")
    response = live.post(
        "/api/sessions", content=body, headers={"Content-Type": "application/json; charset=latin-1"}
    )
    assert response.status_code == 415
    assert response.json()["error"]["code"] == "unsupported_charset"
    ok = live.post(
        "/api/sessions",
        content=json.dumps({"title": "café"}, ensure_ascii=False).encode(),
        headers={"Content-Type": "application/json; charset=UTF-8"},
    )
    assert ok.status_code == 201 and ok.json()["title"] == "café"


def test_the_spec_and_the_docs_page_are_served(live: LiveServer) -> None:
    spec = httpx2.get(live.url + "/openapi.json", timeout=10).json()
    assert spec["openapi"] == "3.1.0"
    rules = {
        (re.sub(r"<[^:>]+:", "<", str(r.rule)), m)  # <int(max=9):id> is {id} there
        for r in live.app.url_map.iter_rules()
        if r.endpoint.split(".")[0] not in ("static", "api-docs")
        and not r.endpoint.endswith(".static")
        for m in r.methods - {"HEAD", "OPTIONS"}
    }
    documented = {
        (path.replace("{", "<").replace("}", ">"), method.upper())
        for path, item in spec["paths"].items()
        for method in item
        if method != "parameters"
    }
    assert rules == documented
    for schema in spec["components"]["schemas"].values():
        Draft202012Validator.check_schema(schema)  # every component is valid JSON Schema
    error = spec["components"]["schemas"]["ErrorResponse"]
    assert error["required"] == ["error"]
    page = httpx2.get(live.url + "/docs", timeout=10)
    assert page.status_code == 200 and "swagger-ui" in page.text and "openapi.json" in page.text


def test_a_failure_outside_flask_is_a_json_500(
    live: LiveServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(environ: Any, start_response: Any) -> Any:
        raise RuntimeError("a middleware outside Flask's error handlers failed")

    monkeypatch.setattr(live.app, "wsgi_app", broken)
    response = live.get("/api/sessions")
    assert response.status_code == 500
    assert response.json()["error"]["code"] == "internal_error"


def test_an_event_id_past_what_a_running_turn_wrote_waits_for_the_next_events(
    live: LiveServer,
) -> None:
    # Found by the cluster soak: in an outage, Redis may store a frame another worker serves
    # before its writer hears so; the owner then knows fewer events than a client saw.
    live.app.extensions["turns"].deps.model.demo_pace.delay = 0.03
    turn = live.start_turn("What did I spend on groceries last month?")
    path = f"/api/turns/{turn['turn_id']}/events"
    seen = decode(events_only(live.read_events(path, max_events=3)))
    ahead = seen[-1][0] + 15  # not written yet: the turn writes more than that
    following = decode(events_only(live.read_events(path, last_event_id=ahead, max_events=1)))
    assert following[0][0] == ahead + 1

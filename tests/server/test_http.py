"""The HTTP/1.1 host on real sockets: deadlines, limits and framing, against toy WSGI apps."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from server.serve import ServerSettings
from tests.live import FAST, Live, serving, text_app
from tests.waits import PATIENCE, wait_until


@pytest.fixture
def live() -> Any:
    with serving(text_app, ServerSettings(timings=FAST, threads=2, max_body=1024)) as server:
        yield server


def test_a_request_is_answered_with_length_and_date(live: Live) -> None:
    reply = live.get("/a%20b/%C3%A9?x=1&y=%20")
    assert reply.status == 200 and reply.reason == "OK"
    # PATH_INFO is percent-decoded as latin-1, the query is left as it came.
    assert reply.body == "GET /a b/Ã©?x=1&y=%20 ".encode("latin-1")
    assert reply.headers["content-length"] == str(len(reply.body))
    assert reply.headers["date"].endswith(" GMT")


def test_a_partial_head_gets_408_within_the_header_deadline(live: Live) -> None:
    client = live.connect()
    client.send(b"GET / HTTP/1.1\r\nHost: test\r\nX-Half: ")
    reply = client.reply()
    assert reply.status == 408 and reply.error()["code"] == "request_timeout"
    assert reply.headers["connection"] == "close"
    assert client.closed()


def test_an_empty_connection_is_closed_without_an_answer(live: Live) -> None:
    client = live.connect()
    assert client.closed()  # within PATIENCE, long after the header deadline


def test_an_idle_keep_alive_connection_is_closed_after_its_deadline(live: Live) -> None:
    client = live.connect()
    client.request("GET", "/first")
    assert client.reply().status == 200
    assert client.closed()  # no second request came: closed, with nothing said


def test_a_body_that_stops_arriving_gets_408(live: Live) -> None:
    client = live.connect()
    client.send(b"POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 10\r\n\r\nabc")
    reply = client.reply()
    assert reply.status == 408 and "body" in reply.error()["message"]
    assert client.closed()


def test_a_declared_body_over_the_limit_gets_413_before_it_is_sent() -> None:
    seen = []

    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        seen.append(environ["PATH_INFO"])
        start_response("200 OK", [])
        return [b""]

    with serving(app, ServerSettings(timings=FAST, threads=1, max_body=1024)) as live:
        client = live.connect()
        client.send(b"POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 1025\r\n\r\n")
        reply = client.reply()
        assert reply.status == 413 and reply.error()["code"] == "request_too_large"
        assert reply.headers["connection"] == "close"
        assert client.closed()
    assert seen == []


def test_a_chunked_body_is_read_whole_and_bounded(live: Live) -> None:
    client = live.connect()
    client.send(b"POST /c HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n")
    client.send(b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
    assert client.reply().body == b"POST /c? hello world"
    client.send(b"POST /c HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n")
    client.send(b"400\r\n" + b"x" * 1024 + b"\r\n1\r\ny\r\n")  # one byte over max_body
    reply = client.reply()
    assert reply.status == 413 and reply.error()["code"] == "request_too_large"
    assert client.closed()


@pytest.mark.parametrize(
    ("head", "status", "code"),
    [
        (b"GET /" + b"a" * 8200 + b" HTTP/1.1\r\nHost: test\r\n\r\n", 414, "uri_too_long"),
        (
            b"GET / HTTP/1.1\r\n" + b"".join(b"X-%d: %s\r\n" % (i, b"v" * 1000) for i in range(40)),
            431,
            "request_header_fields_too_large",
        ),
        (b"NOT HTTP AT ALL\r\n\r\n", 400, "bad_request"),
        (b"GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400, "bad_request"),
        # httptools skips an upgrade request's body: such requests are refused.
        (
            b"POST / HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n"
            b"Content-Length: 3\r\n\r\nabc",
            400,
            "bad_request",
        ),
    ],
)
def test_refused_requests_get_the_json_error_and_the_connection_closes(
    live: Live, head: bytes, status: int, code: str
) -> None:
    client = live.connect()
    client.send(head)
    reply = client.reply()
    assert (reply.status, reply.error()["code"]) == (status, code)
    assert reply.headers["connection"] == "close"
    assert client.closed()


def test_a_header_line_that_never_ends_is_bounded(live: Live) -> None:
    # httptools gathers a header line whole before it is counted; the raw bytes of a head
    # are counted too (from the read after the one where the request began).
    client = live.connect()
    try:
        client.send(b"GET / HTTP/1.1\r\nX-Long: " + b"v" * 300_000)
        client.send(b"v" * 300_000)
    except OSError:
        pass  # refused while we were still sending
    reply = client.reply()
    assert (reply.status, reply.error()["code"]) == (431, "request_header_fields_too_large")


def test_an_upgrade_request_without_a_body_is_served_then_the_connection_closes(
    live: Live,
) -> None:
    client = live.connect()
    client.request("GET", "/ws", Connection="Upgrade", Upgrade="websocket")
    assert client.reply().body == b"GET /ws? "
    assert client.closed()


def test_expect_100_continue_is_answered_before_the_body_is_sent(live: Live) -> None:
    client = live.connect()
    client.send(
        b"POST /e HTTP/1.1\r\nHost: test\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n"
    )
    interim = client.reply()
    assert interim.status == 100
    client.send(b"body")
    assert client.reply().body == b"POST /e? body"


def test_head_gets_headers_only_and_the_connection_stays_usable(live: Live) -> None:
    client = live.connect()
    client.request("HEAD", "/h")
    head = client.reply(head_only=True)
    assert head.status == 200 and "content-length" not in head.headers
    client.request("GET", "/after")
    assert client.reply().body == b"GET /after? "


def test_no_body_statuses_have_no_body() -> None:
    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        start_response(environ["PATH_INFO"][1:] + " Whatever", [])
        return [b""]

    with serving(app) as live:
        client = live.connect()
        for status in (204, 304, 200):
            client.request("GET", f"/{status}")
            reply = client.reply()
            # The app's reason phrase; no body, else the next reply would not parse.
            assert reply.status == status and reply.reason == "Whatever"


def test_pipelined_requests_are_answered_in_order_one_at_a_time() -> None:
    running: list[str] = []
    overlapped = threading.Event()

    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        if running:
            overlapped.set()
        running.append(environ["PATH_INFO"])
        try:
            start_response("200 OK", [])
            return [environ["PATH_INFO"].encode(), environ["wsgi.input"].read()]
        finally:
            running.pop()

    with serving(app) as live:
        client = live.connect()
        requests = b"".join(
            b"POST /%d HTTP/1.1\r\nHost: test\r\nContent-Length: 2\r\n\r\n%02d" % (i, i)
            for i in range(20)
        )
        client.send(requests)
        bodies = [client.reply().body for _ in range(20)]
    assert bodies == [b"/%d%02d" % (i, i) for i in range(20)]
    assert not overlapped.is_set()


def test_a_connection_is_not_read_while_its_pipelined_request_waits() -> None:
    release = threading.Event()

    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        if environ["PATH_INFO"] == "/slow":
            release.wait(PATIENCE)
        start_response("200 OK", [])
        return [environ["PATH_INFO"].encode()]

    with serving(app) as live:
        client = live.connect()
        client.send(
            b"GET /slow HTTP/1.1\r\nHost: test\r\n\r\nGET /next HTTP/1.1\r\nHost: test\r\n\r\n"
        )
        connections = live.running.server.site.connections
        wait_until(lambda: any(not c.transport.is_reading() for c in connections))
        release.set()
        assert [client.reply().body, client.reply().body] == [b"/slow", b"/next"]
        wait_until(lambda: all(c.transport.is_reading() for c in connections))


def test_a_refused_pipelined_request_ends_the_connection_after_the_response_before_it(
    live: Live,
) -> None:
    client = live.connect()
    client.send(b"GET /first HTTP/1.1\r\nHost: test\r\n\r\nNOT HTTP AT ALL\r\n\r\n")
    reply = client.reply()
    assert reply.body == b"GET /first? " and reply.headers["connection"] == "close"
    assert client.closed()


def test_http_1_0_closes_unless_kept_alive(live: Live) -> None:
    client = live.connect()
    client.send(b"GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
    kept = client.reply()
    assert kept.headers["connection"] == "keep-alive"
    client.send(b"GET /b HTTP/1.0\r\n\r\n")
    last = client.reply()
    assert last.body == b"GET /b? " and last.headers["connection"] == "close"
    assert client.closed()


def test_an_app_that_fails_gets_a_json_500_and_the_connection_stays_usable() -> None:
    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        if environ["PATH_INFO"] == "/boom":
            raise RuntimeError("boom")
        start_response(
            "200 OK", [("X-Bad", "a\r\nInjected: yes")] if "bad" in environ["PATH_INFO"] else []
        )
        return [b"fine"]

    with serving(app) as live:
        client = live.connect()
        for path in ("/boom", "/bad-header"):
            client.request("GET", path)
            reply = client.reply()
            assert reply.status == 500 and reply.error()["code"] == "internal_error"
            assert "injected" not in reply.headers
        client.request("GET", "/ok")
        assert client.reply().body == b"fine"

"""Upload paths on the host: the body goes to a temporary file, not memory, and a slow link is
not cut while bytes keep coming (the body deadline is an idle one there, a whole one elsewhere)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from server.serve import ServerSettings
from tests.live import FAST, Live, serving

GAP = FAST.body_timeout / 5  # between two pieces of a slow body
PIECES = 12  # so that the whole body takes over twice the body deadline


def input_app(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
    """A toy app: the type of wsgi.input, and the body."""
    body = environ["wsgi.input"].read()
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [type(environ["wsgi.input"]).__name__.encode(), b" ", body]


@pytest.fixture
def live() -> Iterator[Live]:
    settings = ServerSettings(
        timings=FAST,
        threads=2,
        max_body=1024,
        upload_max_body=4096,
        upload_paths=frozenset({"/up"}),
    )
    with serving(input_app, settings) as server:
        yield server


def trickle(live: Live, path: str, pause: float = 0.0) -> Any:
    """POST a body of PIECES pieces, GAP apart, with `pause` more before the last one."""
    client = live.connect()
    client.send(
        b"POST %s HTTP/1.1\r\nHost: test\r\nContent-Length: %d\r\n\r\n" % (path.encode(), PIECES)
    )
    began = time.monotonic()
    for i in range(PIECES):
        time.sleep(GAP + (pause if i == PIECES - 1 else 0))
        try:
            client.send(b"x")
        except OSError:
            break  # refused and closed before the last piece
    reply = client.reply()
    client.close()
    return reply, time.monotonic() - began


def test_a_slow_upload_is_taken_while_bytes_keep_coming(live: Live) -> None:
    reply, took = trickle(live, "/up")
    assert took > 2 * FAST.body_timeout
    assert reply.status == 200, reply.body
    # Spooled to a file, never joined in memory.
    assert reply.body == b"BufferedRandom " + b"x" * PIECES


def test_an_upload_that_stops_coming_gets_408(live: Live) -> None:
    reply, _ = trickle(live, "/up", pause=2 * FAST.body_timeout)
    assert reply.status == 408 and reply.error()["code"] == "request_timeout"
    assert "No bytes of the request body came" in reply.error()["message"]


def test_elsewhere_the_whole_body_is_due_within_the_deadline(live: Live) -> None:
    reply, _ = trickle(live, "/other")
    assert reply.status == 408 and "did not arrive within" in reply.error()["message"]


def test_a_small_body_elsewhere_stays_in_memory(live: Live) -> None:
    client = live.connect()
    client.request("POST", "/other", b"abc")
    assert client.reply().body == b"BytesIO abc"
    client.close()

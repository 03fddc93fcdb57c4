"""The server as a whole: the app's background, shutdowns, the thread pool, the fd guard."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from config import Timings
from server.serve import ServerSettings
from streaming.hosting import STREAM_HOOK, Hosted
from tests.live import FAST, serving, text_app
from tests.waits import PATIENCE, wait_until

ROOT = Path(__file__).resolve().parents[2]


class Background:
    """Records what the host asks of it; a drain lets the streams end."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.drained: asyncio.Event | None = None

    async def start(self) -> None:
        self.calls.append("start")
        self.drained = asyncio.Event()

    async def drain(self) -> None:
        self.calls.append("drain")
        assert self.drained is not None
        self.drained.set()

    async def stop(self) -> None:
        self.calls.append("stop")


def hosted(background: Background, finished: threading.Event, obey: bool = True) -> Hosted:
    """A stream that ends once the background drains (or never, unless `obey`)."""

    async def parts() -> AsyncIterator[bytes]:
        try:
            yield b"first"
            assert background.drained is not None
            await (background.drained.wait() if obey else asyncio.Event().wait())
            yield b"last"
        finally:
            finished.set()

    def app(environ: dict[str, Any], start_response: Any) -> Any:
        if environ["PATH_INFO"] != "/stream":
            return text_app(environ, start_response)
        start_response("200 OK", [])
        return environ[STREAM_HOOK](parts)

    return Hosted(app, background)


def test_a_graceful_shutdown_drains_lets_the_stream_finish_then_stops() -> None:
    background, finished = Background(), threading.Event()
    with serving(hosted(background, finished)) as live:
        assert background.calls == ["start"]
        idle = live.connect()
        idle.request("GET", "/")
        idle.reply()
        client = live.connect()
        client.request("GET", "/stream")
        client.head()
        assert client.chunk() == b"first"
        closing = threading.Thread(target=live.running.close)
        closing.start()
        assert idle.closed()  # idle keep-alive connections close at once
        assert (client.chunk(), client.chunk()) == (b"last", None)  # finished, not cut
        assert client.closed()
        closing.join(PATIENCE)
        assert not closing.is_alive()
    assert background.calls == ["start", "drain", "stop"]
    assert finished.is_set()


def test_a_graceful_shutdown_cuts_what_outlives_it() -> None:
    background, finished = Background(), threading.Event()
    with serving(hosted(background, finished, obey=False)) as live:
        client = live.connect()
        client.request("GET", "/stream")
        client.head()
        assert client.chunk() == b"first"
        live.running.close(graceful=True)  # waits graceful_shutdown, then closes the rest
        with pytest.raises(EOFError):
            client.chunk()
    assert finished.is_set()
    assert background.calls == ["start", "drain", "stop"]


def test_a_quick_shutdown_closes_everything_without_a_drain() -> None:
    background, finished = Background(), threading.Event()
    with serving(hosted(background, finished)) as live:
        client = live.connect()
        client.request("GET", "/stream")
        client.head()
        assert client.chunk() == b"first"
        live.running.close(graceful=False)
        assert finished.is_set()
    assert background.calls == ["start", "stop"]


def test_a_quick_shutdown_hurries_a_graceful_one() -> None:
    background, finished = Background(), threading.Event()
    patient = ServerSettings(timings=Timings())  # 30 s of graceful shutdown, unless hurried
    with serving(hosted(background, finished, obey=False), patient) as live:
        client = live.connect()
        client.request("GET", "/stream")
        client.head()
        assert client.chunk() == b"first"
        graceful = threading.Thread(target=live.running.close)
        graceful.start()
        wait_until(lambda: "drain" in background.calls)
        quick = live.running.server.shutdown(graceful=False)
        asyncio.run_coroutine_threadsafe(quick, live.running.loop).result(PATIENCE)
        graceful.join(PATIENCE)
        assert not graceful.is_alive() and finished.is_set()
    assert background.calls == ["start", "drain", "stop"]


def test_the_app_runs_on_a_fixed_set_of_threads() -> None:
    barrier = threading.Barrier(3, timeout=PATIENCE)
    names: set[str] = set()

    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        names.add(threading.current_thread().name)
        barrier.wait()  # three calls at once, never more (or the barrier would break)
        start_response("200 OK", [])
        return [b"ok"]

    settings = ServerSettings(timings=FAST, threads=3)
    with serving(app, settings) as live:
        before = set(threading.enumerate())
        assert {t.name for t in live.running.server.pool.threads} == {"http-1", "http-2", "http-3"}
        assert all(t.is_alive() for t in live.running.server.pool.threads)
        clients = [live.connect() for _ in range(12)]
        for client in clients:
            client.request("GET", "/")
        assert all(client.reply().body == b"ok" for client in clients)
        assert set(threading.enumerate()) <= before  # no thread was made for the load
    assert names == {"http-1", "http-2", "http-3"}


def test_express_paths_are_answered_while_every_app_thread_is_busy() -> None:
    release = threading.Event()
    names: dict[str, str] = {}

    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        path = environ["PATH_INFO"]
        names[path] = threading.current_thread().name
        if path == "/slow":
            release.wait(PATIENCE)
        start_response("200 OK", [("Content-Length", "2")])
        return [b"ok"]

    settings = ServerSettings(timings=FAST, threads=2)
    with serving(Hosted(app, express=frozenset({"/healthz"})), settings) as live:
        slow = [live.connect() for _ in range(4)]
        for client in slow:  # both app threads busy, two more requests queued behind them
            client.request("GET", "/slow")
        wait_until(lambda: "/slow" in names)
        assert live.get("/healthz?probe=1").body == b"ok"
        assert names["/healthz"].startswith("express-")
        release.set()
        assert all(client.reply().body == b"ok" for client in slow)
        # Any other path takes the app's pool.
        live.get("/other")
        assert names["/other"].startswith("http-")


def test_settings_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAX_REQUEST_BYTES", "1000")
    monkeypatch.setenv("HTTP_THREADS", "5")
    monkeypatch.setenv("TIME_SCALE", "0.5")
    settings = ServerSettings.from_env()
    assert (settings.max_body, settings.threads, settings.fd_reserve) == (1000, 5, 64)
    assert settings.timings.header_timeout == 5.0


GUARDED = """
import resource, socket, sys
resource.setrlimit(resource.RLIMIT_NOFILE, (64, 100))
from server.serve import ServerSettings, serve_in_thread
from tests.live import text_app, worded
sock = socket.socket()
sock.bind(("127.0.0.1", 0))
running = serve_in_thread(worded(text_app), sock, ServerSettings(fd_reserve=96, threads=2))
assert running.started.wait(10) and running.error is None
print(sock.getsockname()[1], resource.getrlimit(resource.RLIMIT_NOFILE)[0], flush=True)
sys.stdin.read()
running.close(graceful=False)
"""


@pytest.mark.slow  # 6-31 s: thousands of connections
def test_near_the_descriptor_limit_newcomers_get_503_at_once() -> None:
    # The soft limit (64) is raised to the hard one (100); less the reserve, 4 connections fit.
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with subprocess.Popen(
        [sys.executable, "-c", GUARDED],
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    ) as proc:
        assert proc.stdout is not None and proc.stdin is not None
        port, soft = map(int, proc.stdout.readline().split())
        try:
            assert soft == 100
            idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(4)]
            busy = _get(port)
            assert busy.startswith(b"HTTP/1.1 503 ")
            head, body = busy.split(b"\r\n\r\n", 1)
            assert b"\r\nretry-after: 5\r\n" in head and b"\r\nconnection: close" in head
            assert json.loads(body)["error"]["code"] == "server_busy"
            idle.pop().close()
            wait_until(lambda: _get(port).startswith(b"HTTP/1.1 200 "))
            for sock in idle:
                sock.close()
        finally:
            proc.stdin.close()
            proc.wait(PATIENCE)


def _get(port: int) -> bytes:
    """A whole response to one GET /healthz, read up to the close."""
    with socket.create_connection(("127.0.0.1", port), timeout=PATIENCE) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
        return data

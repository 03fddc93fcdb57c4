"""The gunicorn worker, run by a real gunicorn with the project's gunicorn.conf.py."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.rawhttp import Client
from tests.waits import PATIENCE, wait_until

ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def gunicorn(
    target: str, log: Path, *args: str, **env: str
) -> Iterator[tuple[subprocess.Popen, int]]:
    """Run gunicorn on tests/server/toy_app.py's `target`, one worker on a free port."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "--workers", "1"]
    command += ["--bind", f"127.0.0.1:{port}", "--no-control-socket", *args]
    command.append(f"tests.server.toy_app:{target}")
    environ = {**os.environ, "PYTHONPATH": str(ROOT), "TOY_LOG": str(log), **env}
    proc = subprocess.Popen(command, cwd=ROOT, env=environ, stderr=subprocess.PIPE, text=True)
    try:
        yield proc, port
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(PATIENCE)
        assert proc.stderr is not None
        proc.stderr.close()


def answers(port: int) -> bool:
    """Whether the server answers GET / now."""
    try:
        client = Client(port)
    except OSError:
        return False
    try:
        client.request("GET", "/")
        return client.reply().body == b"ok"
    except OSError:
        return False
    finally:
        client.close()


def started_stream(port: int) -> Client:
    """A client that has read the first part of a stream."""
    client = Client(port)
    client.request("GET", "/stream")
    assert client.head().status == 200
    assert client.chunk() == b"first"
    return client


def test_sigterm_drains_lets_streams_finish_and_stops(tmp_path: Path) -> None:
    log = tmp_path / "log"
    with gunicorn("hosted", log) as (proc, port):
        wait_until(lambda: answers(port))
        client = started_stream(port)
        proc.send_signal(signal.SIGTERM)  # the master passes it on to its worker
        assert (client.chunk(), client.chunk()) == (b"last", None)
        assert proc.wait(PATIENCE) == 0
    assert log.read_text().split() == ["start", "drain", "stop"]


def test_sigquit_stops_at_once(tmp_path: Path) -> None:
    log = tmp_path / "log"
    with gunicorn("hosted", log) as (proc, port):
        wait_until(lambda: answers(port))
        client = started_stream(port)
        proc.send_signal(signal.SIGQUIT)
        with pytest.raises(EOFError):
            client.chunk()  # cut, unfinished
        proc.wait(PATIENCE)
    assert log.read_text().split() == ["start", "stop"]


def test_a_worker_that_fails_to_start_stops_gunicorn_with_the_boot_error(tmp_path: Path) -> None:
    with gunicorn("hosted", tmp_path / "log", TOY_FAIL="1") as (proc, _port):
        assert proc.wait(PATIENCE) == 3  # gunicorn's WORKER_BOOT_ERROR halts the master
        assert proc.stderr is not None and "refuses to start" in proc.stderr.read()


def test_the_worker_beats_so_a_short_gunicorn_timeout_spares_it(tmp_path: Path) -> None:
    # Its beat is Timings.heartbeat (here 0.1 s); gunicorn kills a worker silent for 1 s.
    with gunicorn("hosted", tmp_path / "log", "--timeout", "1", TIME_SCALE="0.1") as (
        proc,
        port,
    ):
        wait_until(lambda: answers(port))
        client = started_stream(port)  # lives on only while the same worker does
        with pytest.raises(TimeoutError):
            client.sock.settimeout(3)
            client.chunk()
        assert proc.poll() is None


def test_gunicorn_loads_a_hosted_app_because_it_is_callable(tmp_path: Path) -> None:
    # Pins gunicorn: its loader refuses an app object that is not callable, so Hosted is
    # callable (as its WSGI app): gunicorn boots it and our worker finds its background.
    with gunicorn("hosted", tmp_path / "log") as (proc, port):
        wait_until(lambda: answers(port))
        assert proc.poll() is None

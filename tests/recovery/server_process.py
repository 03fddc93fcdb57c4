"""Run the app as a real server process on a loopback port, so tests can kill -9 it."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx2

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    """Return a TCP port that is free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerProcess:
    """`flask run` in a child process with the given environment."""

    def __init__(self, env: dict[str, str], port: int | None = None) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {**os.environ, **env}
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 20.0) -> None:
        """Start the server and wait until /healthz answers."""
        cmd = [
            sys.executable,
            "-m",
            "flask",
            "--app",
            "app",
            "run",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--no-reload",
            "--with-threads",
        ]
        self.proc = subprocess.Popen(
            cmd, cwd=ROOT, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if httpx2.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return
            except httpx2.TransportError:
                time.sleep(0.1)
        raise RuntimeError("server did not start")

    def kill9(self) -> None:
        """SIGKILL the server: no cleanup code of ours runs."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        """Terminate the server if it still runs."""
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    def client(self, token: str) -> httpx2.Client:
        """An HTTP client with the user's bearer token."""
        return httpx2.Client(
            base_url=self.url, timeout=30, headers={"Authorization": f"Bearer {token}"}
        )

    def __enter__(self) -> ServerProcess:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

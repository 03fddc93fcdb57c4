"""A Redis server of a test's own, that the test may restart empty (no persistence).

The shared Redis on 6379 serves every other test; a test that makes Redis lose its data
starts its own, on a free port, and restarts it with SIGKILL, as a Redis without
persistence loses everything when its host restarts it.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
from pathlib import Path

import pytest
import redis

from tests.waits import wait_until


class PrivateRedis:
    """`redis-server` on a free loopback port, in `folder`, keeping nothing on disk."""

    def __init__(self, folder: Path) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            if os.environ.get("REQUIRE_REDIS") == "1":
                pytest.fail("redis-server is required but not installed")
            pytest.skip("redis-server not installed")
        self.binary, self.folder = binary, folder
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen[bytes] | None = None
        self.restarts = 0
        self.start()

    def start(self) -> None:
        """Start the server and wait until it answers."""
        self.folder.mkdir(parents=True, exist_ok=True)
        cmd = [
            self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
            "--appendonly", "no", "--dir", str(self.folder),
        ]  # fmt: skip
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = redis.Redis.from_url(self.url)

        def answers() -> bool:
            try:
                return bool(client.ping())
            except redis.ConnectionError:
                return False
            finally:
                client.close()

        wait_until(answers, message="redis-server did not start", every=0.02)

    def kill(self) -> None:
        """Kill the server at once: everything it held is gone."""
        if self.proc is not None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()
            self.proc = None

    def restart_empty(self) -> None:
        """Kill the server and start it again, empty."""
        self.kill()
        self.restarts += 1
        self.start()

    def close(self) -> None:
        """Stop the server for good."""
        self.kill()

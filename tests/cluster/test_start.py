"""`make run` (start.py): one process migrates, seeds, prints the token and serves; the last line
it prints once it serves is the signed-in link; a restart keeps the data and the token; a
second one on a busy port stops at once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from tests.cluster.process import ROOT, free_port
from tests.waits import PATIENCE, wait_until


class Run:
    """`python -m start` on a free port, its stdout and stderr read as one stream of lines."""

    def __init__(self, instance: Path, port: int) -> None:
        env = {**os.environ, "INSTANCE_PATH": str(instance), "PYTHONPATH": str(ROOT)}
        for name in ("PROMETHEUS_MULTIPROC_DIR", "DATABASE_URL", "EVENT_LOG_URL"):
            env.pop(name, None)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "start", "--port", str(port), "--user", "demo"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.lines: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def wait_for_link(self) -> str:
        def link() -> str | None:
            assert self.proc.poll() is None, "\n".join(self.lines)
            found = [line for line in self.lines if "/#token=" in line]
            return found[-1] if found else None

        return wait_until(link, 6 * PATIENCE, "the signed-in link", every=0.1)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.reader.join(10)


@pytest.fixture
def running(tmp_path: Path) -> Iterator[list[Run]]:
    runs: list[Run] = []
    yield runs
    for run in runs:
        run.stop()


def test_one_process_serves_and_its_last_line_is_the_signed_in_link(
    tmp_path: Path, running: list[Run]
) -> None:
    port = free_port()
    first = Run(tmp_path / "instance", port)
    running.append(first)
    link = first.wait_for_link()
    url = f"http://127.0.0.1:{port}"
    assert link.strip().startswith(f"{url}/#token=")
    assert first.lines[-1] == link  # nothing after it until a request comes
    token = link.split("#token=", 1)[1]
    assert any(line == token for line in first.lines)  # the token, printed for the API
    assert any(line.startswith("seeded demo (id 1): ") for line in first.lines)
    sessions = httpx2.get(f"{url}/api/sessions", headers={"Authorization": f"Bearer {token}"})
    assert sessions.status_code == 200
    assert httpx2.get(f"{url}/", timeout=10).status_code == 200

    # A second `make run` on the busy port stops before it loads anything.
    second = subprocess.run(
        [sys.executable, "-m", "start", "--port", str(port)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert second.returncode == 1
    assert f"port {port} is in use: is `make run` already running?" in second.stderr

    # A restart keeps the data and the token.
    first.stop()
    assert first.proc.returncode == 0, "\n".join(first.lines)
    again = Run(tmp_path / "instance", port)
    running.append(again)
    assert again.wait_for_link() == link
    assert "demo (id 1) already has finance data: left as it is" in again.lines

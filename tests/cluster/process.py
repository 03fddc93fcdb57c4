"""Run the app under gunicorn with N workers, as `make run` does, and kill its workers."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2

from config import load_timings
from tests.waits import wait_until

ROOT = Path(__file__).resolve().parents[2]
AUDITED_APP = "tests.cluster.audited_app:hosted()"
# How long a cluster may take to serve: the master imports the app (2.5 to 4 s of CPU), then
# each worker builds its own. On a 2-core machine at load 4 to 6, three took over 30 s; at
# load 9, with another cluster test starting beside it (`make test` runs two at a time), the
# master's import alone took 45 s. A patience, never a measured figure.
STARTUP_PATIENCE = 180.0


def free_port() -> int:
    """Return a TCP port that is free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def children(pid: int) -> list[int]:
    """Return the pids whose parent is `pid`."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # The command name is in parentheses and may hold spaces: split after it.
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid and fields[0] != "Z":
            out.append(int(entry.name))
    return out


class Cluster:
    """A gunicorn master with `workers` workers on a loopback port."""

    def __init__(
        self,
        env: dict[str, str],
        workers: int = 3,
        log: Path | None = None,
        port: int | None = None,
        app: str = AUDITED_APP,
    ) -> None:
        self.workers, self.port, self.app = workers, port or free_port(), app
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {**os.environ, **env, "PYTHONPATH": str(ROOT)}
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = STARTUP_PATIENCE) -> None:
        """Start gunicorn and wait until every worker is up and /healthz answers."""
        cmd = [
            sys.executable, "-m", "gunicorn", "-c", str(ROOT / "gunicorn.conf.py"),
            "--bind", f"127.0.0.1:{self.port}", "--workers", str(self.workers),
            "--threads", "64", self.app,
        ]  # fmt: skip
        out = open(self.log, "ab") if self.log else subprocess.DEVNULL  # noqa: SIM115
        self.proc = subprocess.Popen(cmd, cwd=ROOT, env=self.env, stdout=out, stderr=out)
        try:
            wait_until(self._ready, timeout, "the cluster did not start", every=0.1)
        except BaseException:
            # The fixture that started it never reaches its teardown: stop it here.
            self.kill_all()
            raise

    def _ready(self) -> bool:
        """Every worker is up and /healthz answers; raises if gunicorn exited."""
        assert self.proc is not None
        if self.proc.poll() is not None:
            tail = self.log.read_text()[-3000:] if self.log else ""
            raise RuntimeError(f"gunicorn exited with {self.proc.returncode}:\n{tail}")
        try:
            ready = httpx2.get(f"{self.url}/healthz", timeout=1).status_code == 200
        except httpx2.TransportError:
            return False
        return ready and len(self.worker_pids()) >= self.workers

    def worker_pids(self) -> list[int]:
        """Return the pids of the live workers."""
        assert self.proc is not None
        return children(self.proc.pid)

    def signal_worker(self, pid: int, sig: int) -> None:
        """Send `sig` to one worker; the master starts a new one when it exits."""
        os.kill(pid, sig)

    def wait_for_workers(self, timeout: float = 90.0, exclude: set[int] | None = None) -> None:
        """Wait until `workers` workers other than `exclude` run."""
        wait_until(
            lambda: len(set(self.worker_pids()) - (exclude or set())) >= self.workers,
            timeout,
            "workers were not replaced",
            every=0.1,
        )

    def kill_all(self) -> None:
        """SIGKILL the master and every worker: nothing of ours runs on the way out."""
        assert self.proc is not None
        pids = self.worker_pids()
        self.proc.send_signal(signal.SIGKILL)
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        """Stop gracefully (SIGTERM to the master), killing it if it lingers."""
        if self.proc and self.proc.poll() is None:
            pids = self.worker_pids()
            self.proc.terminate()
            try:
                self.proc.wait(40)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                for pid in pids:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)

    def client(self, token: str) -> httpx2.Client:
        """An HTTP client with the user's bearer token.

        It reuses an idle connection only well within the server's idle deadline
        (HEADER_TIMEOUT, scaled by TIME_SCALE): one the server just closed fails a request.
        """
        idle = load_timings(self.env).header_timeout / 2
        return httpx2.Client(
            base_url=self.url,
            timeout=30,
            headers={"Authorization": f"Bearer {token}"},
            limits=httpx2.Limits(keepalive_expiry=idle),
        )

    def __enter__(self) -> Cluster:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

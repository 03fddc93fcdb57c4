"""Gunicorn settings: our HTTP host's workers (server/worker.py) serving the WSGI app.

Each worker starts the app's background work (its turn engine) at boot, so orphaned turns
resume with no request. SIGTERM (a rolling deploy, `kill -HUP` of the master, a recycled
worker) stops the worker from taking new turns, ends its SSE streams so their clients
reconnect elsewhere, and lets its running turns finish or hands them over to the other
workers at their next round boundary (all of them by DRAIN_SECONDS). No turn ends
`interrupted`.
"""

from __future__ import annotations

import importlib
import math
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from config import Settings

worker_class = "server.worker.Worker"
timeout = 0
# The control socket lives at one fixed path per user: several servers would fight over it.
control_socket_disable = True

# A worker's graceful shutdown (drain included) ends by Timings.graceful_shutdown; the
# master's SIGKILL comes a little later, so it never cuts one short.
SETTINGS = Settings.from_env()
graceful_timeout = math.ceil(SETTINGS.timings.graceful_shutdown) + 5


def on_starting(server: Any) -> None:
    """Import the served app's module; refuse several workers on the single-process defaults."""
    _import_the_app(getattr(server.app, "app_uri", None))  # start.py has built the app
    if server.cfg.workers <= 1:
        return
    problems = []
    if SETTINGS.event_log_url.startswith("memory"):
        problems.append("EVENT_LOG_URL=redis://127.0.0.1:6379/0 (a shared event log)")
    if SETTINGS.database_url.startswith("sqlite"):
        problems.append("DATABASE_URL=postgresql+psycopg://... (a shared database)")
    if problems:
        raise SystemExit(
            f"{server.cfg.workers} workers need " + " and ".join(problems) + "; or use one worker."
        )


def _import_the_app(uri: str | None) -> None:
    """Import the module of the app served (`app` of "app:hosted()") here, in the master, so
    that every worker, and every replacement of a killed one, forks with the app's modules
    loaded instead of importing them again: 2.5 to 4 s of CPU per worker, most of a
    replacement's start. Importing them starts no thread and opens no connection; each worker
    still builds its own app. This runs after `_metrics_dir()`: prometheus_client, imported with
    the app, reads PROMETHEUS_MULTIPROC_DIR when it is imported."""
    if not uri:
        return
    try:
        importlib.import_module(uri.split(":", 1)[0])
    except Exception:  # the worker imports it again and reports its own boot error
        return


def _metrics_dir() -> None:
    """Give the workers one PROMETHEUS_MULTIPROC_DIR, empty, so /metrics adds them all up."""
    path = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if not path:
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="chat-metrics-")
        os.environ["CHAT_METRICS_TMP"] = "1"
        return
    Path(path).mkdir(parents=True, exist_ok=True)
    for stale in Path(path).glob("*.db"):  # an earlier run's values would be added in
        stale.unlink()


# Before gunicorn loads the worker class (which imports prometheus_client): the client
# decides at import whether values are shared through PROMETHEUS_MULTIPROC_DIR.
_metrics_dir()


def child_exit(server: Any, worker: Any) -> None:
    """A worker is gone: drop its live gauges (its counters stay in the sums)."""
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)


def on_exit(server: Any) -> None:
    """Remove the metrics folder this master made."""
    if os.environ.get("CHAT_METRICS_TMP"):
        shutil.rmtree(os.environ["PROMETHEUS_MULTIPROC_DIR"], ignore_errors=True)

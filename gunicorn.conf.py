"""Gunicorn settings: uvicorn workers (server/worker.py) serving the ASGI front.

Each worker starts its turn engine at boot (the ASGI lifespan), so orphaned turns resume
with no request. SIGTERM (a rolling deploy, `kill -HUP` of the master, a recycled worker)
stops the worker from taking new turns, ends its SSE streams so their clients reconnect
elsewhere, and lets its running turns finish or hands them over to the other workers at
their next round boundary (all of them by DRAIN_SECONDS). No turn ends `interrupted`.
"""

from __future__ import annotations

import os
from typing import Any

worker_class = "server.worker.Worker"
timeout = 0
# The control socket lives at one fixed path per user: several servers would fight over it.
control_socket_disable = True
# Longer than DRAIN_SECONDS (20 s by default), so a drain is never cut short by SIGKILL.
graceful_timeout = 30


def on_starting(server: Any) -> None:
    """Refuse several workers on the single-process defaults, saying what to set."""
    if server.cfg.workers <= 1:
        return
    problems = []
    if os.environ.get("EVENT_LOG_URL", "memory://").startswith("memory"):
        problems.append("EVENT_LOG_URL=redis://127.0.0.1:6379/0 (a shared event log)")
    if os.environ.get("DATABASE_URL", "sqlite").startswith("sqlite"):
        problems.append("DATABASE_URL=postgresql+psycopg://... (a shared database)")
    if problems:
        raise SystemExit(
            f"{server.cfg.workers} workers need " + " and ".join(problems) + "; or use one worker."
        )

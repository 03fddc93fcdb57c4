"""The app as `make run` serves it, plus an audit line per real tool execution.

The audit (TOOL_AUDIT_FILE) lets tests count executions per tool_use id across every
worker process, independently of the claims that are meant to prevent doubles.
"""

from __future__ import annotations

import os
from typing import Any

from flask import Flask

from app import create_app as create_real_app
from app import host
from streaming.hosting import Hosted


def create_app() -> Flask:
    """Create the app; wrap tool execution with the audit when TOOL_AUDIT_FILE is set."""
    app = create_real_app()
    path = os.environ.get("TOOL_AUDIT_FILE")
    if path:
        registry = app.extensions["turns"].deps.tools.registry
        execute = registry.execute

        def audited(name: str, tool_input: dict[str, Any], ctx: Any) -> Any:
            # Counted once it ran: a run the database cut short (raising) did nothing.
            outcome = execute(name, tool_input, ctx)
            # One small O_APPEND write per line: lines from several processes never mix.
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            try:
                os.write(fd, f"{ctx.turn_id}/{ctx.tool_use_id}\n".encode())
            finally:
                os.close(fd)
            return outcome

        registry.execute = audited  # type: ignore[method-assign]
    return app


def hosted() -> Hosted:
    """The audited app and its engine, as `app.hosted()` gives them to the server."""
    return host(create_app())

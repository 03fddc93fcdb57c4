"""Settings read from the environment, with defaults that run anywhere."""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any


def _int(name: str, default: int) -> int:
    return int(os.environ.get(name, default))


def _float(name: str, default: float) -> float:
    return float(os.environ.get(name, default))


def load_settings(instance_path: str) -> dict[str, Any]:
    """Return the app's configuration from environment variables."""
    Path(instance_path).mkdir(parents=True, exist_ok=True)
    return {
        "DATABASE_URL": os.environ.get("DATABASE_URL")
        or f"sqlite:///{Path(instance_path, 'chat.db')}",
        "ANTHROPIC_API_KEY": os.environ.get("ANTHROPIC_API_KEY") or None,
        "ANTHROPIC_BASE_URL": os.environ.get("ANTHROPIC_BASE_URL") or None,
        "ANTHROPIC_MODEL": os.environ.get("ANTHROPIC_MODEL", "claude-sonnet-5-5"),
        "MAX_TOKENS": _int("MAX_TOKENS", 4096),
        "MAX_TOOL_ROUNDS": _int("MAX_TOOL_ROUNDS", 10),
        "MAX_MESSAGE_CHARS": _int("MAX_MESSAGE_CHARS", 16_000),
        "MAX_CONTENT_LENGTH": _int("MAX_REQUEST_BYTES", 256 * 1024),
        "UPSTREAM_MAX_RETRIES": _int("UPSTREAM_MAX_RETRIES", 4),
        "UPSTREAM_RETRY_BUDGET": _float("UPSTREAM_RETRY_BUDGET", 60.0),
        "STALL_TIMEOUT": _float("STALL_TIMEOUT", 60.0),
        "FIRST_TOKEN_TIMEOUT": _float("FIRST_TOKEN_TIMEOUT", 120.0),
        "UPSTREAM_BACKOFF_BASE": _float("UPSTREAM_BACKOFF_BASE", 0.5),
        "TOOL_TIMEOUT": _float("TOOL_TIMEOUT", 20.0),
        "HEARTBEAT_SECONDS": _float("HEARTBEAT_SECONDS", 5.0),
        "STALE_TURN_SECONDS": _float("STALE_TURN_SECONDS", 30.0),
        "KEEPALIVE_SECONDS": _float("KEEPALIVE_SECONDS", 15.0),
        "EVENTS_TOKEN_MAX_AGE": _int("EVENTS_TOKEN_MAX_AGE", 3600),
        "EVENT_LOG_URL": os.environ.get("EVENT_LOG_URL", "memory://"),
        "DEMO_EVENT_DELAY": _float("DEMO_EVENT_DELAY", 0.0),
        "SECRET_KEY": os.environ.get("SECRET_KEY") or _instance_secret(instance_path),
    }


def _instance_secret(instance_path: str) -> str:
    # One key per instance folder, so every worker process signs tokens alike.
    path = Path(instance_path, "secret_key")
    if not path.exists():
        path.write_text(secrets.token_hex(32))
    return path.read_text().strip()

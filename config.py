"""Settings read from the environment, with defaults that run anywhere."""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from streaming.events import BUSY_POLICIES, DEFAULT_BUSY_POLICY
from telemetry.tracing import enabled_by_env as tracing_enabled_by_env


def _int(name: str, default: int) -> int:
    return int(os.environ.get(name, default))


def _float(name: str, default: float) -> float:
    return float(os.environ.get(name, default))


@dataclass(frozen=True)
class Timings:
    """Every timing constant of the server, engine and page, in seconds, scaled by TIME_SCALE.

    They only make sense at their ratios (a stall is detected before the retry budget runs
    out, a worker is presumed dead after several missed heartbeats, a store outage is waited
    out for longer than a worker takes to be presumed dead), so tests shrink them all by one
    factor and never tune one alone. Nothing else in the project holds a duration.
    """

    # The model: silence before an attempt is abandoned, and the waits between attempts.
    stall_timeout: float = 60.0
    first_token_timeout: float = 120.0
    retry_budget: float = 60.0
    backoff_base: float = 0.5
    backoff_cap: float = 8.0
    model_connect: float = 10.0
    model_write: float = 30.0
    # A request near the window is counted by the API first; past this the estimate decides.
    count_tokens: float = 5.0
    # Tools: how long one may run before it becomes an `is_error` result.
    tool_timeout: float = 20.0
    # Workers: one heartbeat for all of a worker's turns (it also polls cancels and leases);
    # another worker takes the turns of one silent for `stale_after`.
    heartbeat: float = 1.0
    stale_after: float = 6.0
    reaper_interval: float = 1.0
    forget_workers: float = 3600.0
    drain: float = 20.0
    # The store (database): an outage is waited out this long before a turn fails, retrying
    # with backoff. No wait for the database is without end (models/deadlines.py): a connect
    # gives up after `store_connect`, a wait for a pooled connection after `store_checkout`;
    # PostgreSQL cancels a statement after `store_statement` and a lock wait after
    # `store_lock` (SQLite's writers wait as long for the write lock); the client gives up on
    # an answer after `store_answer` (a server that accepts and never answers); TCP
    # keepalives probe an idle connection after `store_keepalive`.
    store_outage: float = 120.0
    store_backoff_base: float = 0.05
    store_backoff_cap: float = 2.0
    store_connect: float = 5.0
    store_checkout: float = 5.0
    store_statement: float = 4.0
    store_lock: float = 3.0
    store_answer: float = 5.0
    store_keepalive: float = 5.0
    # The event log: Redis retries, its writer's coalescing, its followers' blocking reads;
    # how long finished logs stay in memory and streams in Redis.
    log_backoff_base: float = 0.05
    log_backoff_cap: float = 2.0
    log_coalesce: float = 0.005
    log_block: float = 0.1
    log_gather: float = 0.003
    log_connect: float = 5.0
    log_retain: float = 60.0
    log_expire: float = 3600.0
    # Readers: keep-alive comments, and how long an idle reader waits before asking storage.
    keepalive: float = 15.0
    idle_check: float = 1.0
    token_poll: float = 2.0
    # Streams under load read at a shared beat (added latency, for CPU per event); a read
    # that took longer than `network_wait` waited for the network.
    stream_batch: float = 0.04
    network_wait: float = 0.002
    # The HTTP server: whole request headers, then the whole body, must arrive in time; a
    # client that reads nothing for `slow_reader` is dropped; accept() pauses after a failure.
    header_timeout: float = 10.0
    body_timeout: float = 10.0
    slow_reader: float = 30.0
    accept_pause: float = 0.1
    graceful_shutdown: float = 30.0
    # A side-effect tool waits this long for the user's approval before it is declined;
    # the upkeep looks for expired requests every `approval_sweep`.
    approval_ttl: float = 86400.0
    approval_sweep: float = 30.0
    # The chat page asks this often whether another tab decided an approval card it shows.
    page_poll: float = 4.0
    # What clients are told to wait (Retry-After): busy, storage down, this worker restarting.
    busy_retry_after: float = 5.0
    outage_retry_after: float = 5.0
    restart_retry_after: float = 1.0
    # A search answers what it found within `search_budget` (a partial page and a cursor
    # past that); one refused because too many run is told to retry after `search_retry_after`.
    search_budget: float = 0.5
    search_retry_after: float = 1.0

    def scaled(self, factor: float) -> Timings:
        """Return every constant multiplied by `factor`."""
        return Timings(**{f.name: getattr(self, f.name) * factor for f in fields(self)})


# Environment variable of each timing that can be set alone, as documented in docs/.
TIMING_ENV = {
    "stall_timeout": "STALL_TIMEOUT",
    "first_token_timeout": "FIRST_TOKEN_TIMEOUT",
    "retry_budget": "UPSTREAM_RETRY_BUDGET",
    "backoff_base": "UPSTREAM_BACKOFF_BASE",
    "tool_timeout": "TOOL_TIMEOUT",
    "heartbeat": "HEARTBEAT_SECONDS",
    "stale_after": "STALE_TURN_SECONDS",
    "keepalive": "KEEPALIVE_SECONDS",
    "drain": "DRAIN_SECONDS",
    "token_poll": "TOKEN_POLL_SECONDS",
    "stream_batch": "STREAM_BATCH_SECONDS",
    "store_outage": "STORE_OUTAGE_SECONDS",
    "header_timeout": "HEADER_TIMEOUT",
    "approval_ttl": "APPROVAL_TTL",
    "body_timeout": "BODY_TIMEOUT",
    "search_budget": "SEARCH_BUDGET_SECONDS",
}


def load_timings(overrides: dict[str, Any] | None = None) -> Timings:
    """Build Timings from the environment (or `overrides`), then apply TIME_SCALE."""
    source = {**os.environ, **(overrides or {})}
    values = {
        name: float(source[env])
        for name, env in TIMING_ENV.items()
        if source.get(env) not in (None, "")
    }
    return Timings(**values).scaled(float(source.get("TIME_SCALE") or 1.0))


def _choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    value = os.environ.get(name, default).strip().lower()
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return value


def _switch(name: str, default: bool) -> bool:
    value = _choice(name, "on" if default else "off", ("on", "off", "true", "false", "1", "0"))
    return value in ("on", "true", "1")


def _optional_int(name: str) -> int | None:
    value = os.environ.get(name, "").strip()
    return int(value) if value else None


def _json_object(name: str) -> dict[str, Any]:
    value = os.environ.get(name, "").strip()
    if not value:
        return {}
    try:
        parsed = json.loads(value)
    except ValueError as err:
        raise ValueError(f"{name} must be a JSON object: {err}") from err
    if not isinstance(parsed, dict):
        raise ValueError(f"{name} must be a JSON object, got {type(parsed).__name__}")
    return parsed


def _list(name: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, "").split(",") if item.strip()]


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
        "MODEL_CONTEXT_TOKENS": _int("MODEL_CONTEXT_TOKENS", 200_000),
        "MODEL_PRICES": _json_object("MODEL_PRICES"),
        "USER_DAILY_TOKENS": _optional_int("USER_DAILY_TOKENS"),
        "USER_MAX_CONCURRENT_TURNS": _int("USER_MAX_CONCURRENT_TURNS", 4),
        "MAX_TOOL_ROUNDS": _int("MAX_TOOL_ROUNDS", 10),
        "MAX_MESSAGE_CHARS": _int("MAX_MESSAGE_CHARS", 16_000),
        "MAX_CONTENT_LENGTH": _int("MAX_REQUEST_BYTES", 256 * 1024),
        "UPSTREAM_MAX_RETRIES": _int("UPSTREAM_MAX_RETRIES", 4),
        "MAX_TAKEOVERS": _int("MAX_TAKEOVERS", 3),
        # A message sent while a turn runs: reject (409), queue it, or interrupt the turn.
        "BUSY_POLICY": _choice("BUSY_POLICY", DEFAULT_BUSY_POLICY, BUSY_POLICIES),
        "MAX_QUEUED_TURNS": _int("MAX_QUEUED_TURNS", 5),
        # The engine's fixed pools: database statements, and tool handlers.
        "STORE_THREADS": _int("STORE_THREADS", 8),
        "TOOL_THREADS": _int("TOOL_THREADS", 8),
        "EVENTS_TOKEN_MAX_AGE": _int("EVENTS_TOKEN_MAX_AGE", 3600),
        "EVENT_LOG_URL": os.environ.get("EVENT_LOG_URL", "memory://"),
        "DEMO_EVENT_DELAY": _float("DEMO_EVENT_DELAY", 0.0),
        "PROMPT_CACHE": _choice("PROMPT_CACHE", "5m", ("off", "5m", "1h")),
        # Tool input streamed as the model writes it, unvalidated (the turn copes with bad JSON).
        "TOOL_EAGER_INPUT": _switch("TOOL_EAGER_INPUT", True),
        # How a conversation longer than the window is sent: trim, compact or edit.
        "CONTEXT_STRATEGY": _choice("CONTEXT_STRATEGY", "trim", ("trim", "compact", "edit")),
        "CORS_ORIGINS": _list("CORS_ORIGINS"),
        "RATE_LIMIT": os.environ.get("RATE_LIMIT", "60/minute"),
        "RATE_LIMIT_STORAGE_URL": os.environ.get("RATE_LIMIT_STORAGE_URL") or None,
        # New sessions per user: a rate, and a cap on those kept (0: unlimited).
        "SESSION_RATE_LIMIT": os.environ.get("SESSION_RATE_LIMIT", "60/minute"),
        "USER_MAX_SESSIONS": _int("USER_MAX_SESSIONS", 10_000),
        # Search: sessions one request may scan, and searches at once per user and per process
        # (well below the 16 http threads, so searches never hold them all).
        "SEARCH_MAX_SESSIONS": _int("SEARCH_MAX_SESSIONS", 10_000),
        "SEARCH_USER_CONCURRENCY": _int("SEARCH_USER_CONCURRENCY", 2),
        "SEARCH_CONCURRENCY": _int("SEARCH_CONCURRENCY", 4),
        # The newest messages `GET /api/sessions/<id>` shows; earlier ones are paged.
        "SESSION_MESSAGES": _int("SESSION_MESSAGES", 100),
        "METRICS_TOKEN": os.environ.get("METRICS_TOKEN") or None,
        "AUDIT_LOG": os.environ.get("AUDIT_LOG") or "stderr",
        "TRACING": tracing_enabled_by_env(),
        "SECRET_KEY": os.environ.get("SECRET_KEY") or _instance_secret(instance_path),
    }


def _instance_secret(instance_path: str) -> str:
    # One key per instance folder, so every worker process signs tokens alike.
    path = Path(instance_path, "secret_key")
    if not path.exists():
        path.write_text(secrets.token_hex(32))
    return path.read_text().strip()

"""Settings read from the environment once, typed, with every default in one place."""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Literal

from streaming.wire.events import BUSY_POLICIES, DEFAULT_BUSY_POLICY, BusyPolicy

# The instance folder's default: beside app.py (this file's folder).
HERE = Path(__file__).resolve().parent


class SettingError(ValueError):
    """A setting's value cannot be used; the message names its variable."""


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
    # MCP servers: one call's deadline, connecting (and the first listing at start), the
    # waits between reconnects, and the ping that finds a server gone.
    mcp_call_timeout: float = 30.0
    mcp_connect: float = 10.0
    mcp_backoff_base: float = 0.5
    mcp_backoff_cap: float = 30.0
    mcp_ping: float = 15.0
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
    # A statement import writes a batch of rows at least this often while it drafts, commits
    # or undoes; one still for longer lost its worker, and the user may resume or undo it.
    import_stall: float = 60.0
    # The import dialog asks this often how far a draft, commit or undo it waits for is.
    import_poll: float = 0.5
    # The signed token of an `events_url` (a browser's EventSource) works this long.
    events_token_max_age: float = 3600.0
    # The connector's OAuth: an authorization code, an access token and a refresh token live
    # this long; a client ID metadata document is fetched within `cimd_fetch` and kept at
    # most `cimd_cache`; an app has `mcp_request_state` to answer an approval it was asked; a
    # registered client that no user connected within `oauth_unused_client` is forgotten.
    oauth_code: float = 300.0
    oauth_access: float = 3600.0
    oauth_refresh: float = 604_800.0
    cimd_fetch: float = 5.0
    cimd_cache: float = 3600.0
    mcp_request_state: float = 600.0
    oauth_unused_client: float = 86400.0

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
    "mcp_call_timeout": "MCP_CALL_TIMEOUT",
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
    "events_token_max_age": "EVENTS_TOKEN_MAX_AGE",
    "oauth_access": "OAUTH_ACCESS_TOKEN_SECONDS",
    "oauth_refresh": "OAUTH_REFRESH_TOKEN_SECONDS",
}

# Variables Settings does not parse, and who reads them.
READ_ELSEWHERE = {
    "PORT": "the Makefile",
    "WORKERS": "the Makefile",
    "DEMO_USER": "the Makefile",
    "PROMETHEUS_MULTIPROC_DIR": "prometheus_client (gunicorn.conf.py makes one if unset)",
    "CHAT_METRICS_TMP": "gunicorn.conf.py, its note to itself that it made that folder",
    "OTEL_*": "the OpenTelemetry SDK and telemetry/tracing.py (the standard variables)",
    "REQUIRE_POSTGRES": "the test suite",
    "REQUIRE_REDIS": "the test suite",
    "REQUIRE_NODE": "the test suite",
    "REQUIRE_BROWSER": "the test suite",
}

# Parsers: each takes an environment string or an override's typed value.
Parse = Callable[[object], Any]


def _unset(raw: object) -> bool:
    return raw is None or (isinstance(raw, str) and not raw.strip())


def _text(raw: object) -> str:
    if not isinstance(raw, str):
        raise SettingError(f"must be text, got {raw!r}")
    return raw.strip()


def _int(raw: object) -> int:
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw
    try:
        return int(_text(raw))
    except ValueError as err:
        raise SettingError(f"must be a whole number, got {raw!r}") from err


def _float(raw: object) -> float:
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        return float(raw)
    try:
        return float(_text(raw))
    except ValueError as err:
        raise SettingError(f"must be a number, got {raw!r}") from err


def _choice(*choices: str) -> Parse:
    def parse(raw: object) -> str:
        value = _text(raw).lower()
        if value not in choices:
            raise SettingError(f"must be one of {', '.join(choices)}, got {value!r}")
        return value

    return parse


def _switch(raw: object) -> bool:
    if isinstance(raw, bool):
        return raw
    return _choice("on", "off", "true", "false", "1", "0")(raw) in ("on", "true", "1")


def _flag(raw: object) -> bool:
    if not isinstance(raw, bool):
        raise SettingError(f"must be True or False, got {raw!r}")
    return raw


def _json_object(raw: object) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        parsed = json.loads(_text(raw))
    except ValueError as err:
        raise SettingError(f"must be a JSON object: {err}") from err
    if not isinstance(parsed, dict):
        raise SettingError(f"must be a JSON object, got {type(parsed).__name__}")
    return parsed


def _names(raw: object) -> tuple[str, ...]:
    items = raw if isinstance(raw, list | tuple) else _text(raw).split(",")
    return tuple(_text(item) for item in items if _text(item))


def _timings(raw: object) -> Timings:
    if not isinstance(raw, Timings):
        raise SettingError(f"must be a config.Timings, got {raw!r}")
    return raw


def _meta(
    env: str | None, parse: Parse, doc: str, *, key: str | None = None, shown: str | None = None
) -> dict[str, Any]:
    """A Settings field's metadata: read from `env` (None: only set by code, under `key`).

    `shown` is how docs/configuration.md writes a default that is not a plain value.
    """
    return {"env": env, "key": key or env, "parse": parse, "doc": doc, "shown": shown}


def _setting(
    env: str | None,
    default: Any,
    parse: Parse,
    doc: str,
    *,
    key: str | None = None,
    shown: str | None = None,
) -> Any:
    """A Settings field with an immutable default (see `_meta`)."""
    return field(default=default, metadata=_meta(env, parse, doc, key=key, shown=shown))


@dataclass(frozen=True)
class Settings:
    """Every setting of the app, read once from the environment (docs/configuration.md).

    A field's metadata holds its variable (`env`), its parser and a one-line description;
    its default is the one default. Fields set only by code (tests) have `env` None.
    """

    # The model, storage and the event log.
    database_url: str = _setting(
        "DATABASE_URL",
        "",
        _text,
        "any SQLAlchemy URL (unset: chat.db in the instance folder)",
        shown="`sqlite:///instance/chat.db`",
    )
    event_log_url: str = _setting(
        "EVENT_LOG_URL", "memory://", _text, "where turn events live: memory:// or redis://..."
    )
    anthropic_api_key: str | None = _setting(
        "ANTHROPIC_API_KEY",
        None,
        _text,
        "the real API's key (unset: the offline demo model)",
        shown="unset: offline demo model",
    )
    anthropic_base_url: str | None = _setting(
        "ANTHROPIC_BASE_URL", None, _text, "another API endpoint", shown="SDK default"
    )
    anthropic_model: str = _setting(
        "ANTHROPIC_MODEL", "claude-sonnet-5-5", _text, "the model of the real API"
    )
    max_tokens: int = _setting("MAX_TOKENS", 4096, _int, "output token limit per model call")
    model_context_tokens: int = _setting(
        "MODEL_CONTEXT_TOKENS", 200_000, _int, "the model's context window, in tokens"
    )
    model_prices: dict[str, Any] = field(
        default_factory=dict,
        metadata=_meta(
            "MODEL_PRICES",
            _json_object,
            "JSON object of prices per million tokens by model, over the built-in table",
            shown="built-in table",
        ),
    )
    thinking: Literal["adaptive", "between_tools"] = _setting(
        "THINKING",
        "adaptive",
        _choice("adaptive", "between_tools"),
        "the thinking type asked of models that take one: adaptive or between_tools",
    )
    effort: str = _setting(
        "EFFORT",
        "",
        _choice("", "low", "medium", "high", "xhigh", "max"),
        "output_config.effort for models that take it (unset: the model's default)",
        shown="unset: the model's default",
    )
    thinking_display: Literal["summarized", "omitted", "updates"] = _setting(
        "THINKING_DISPLAY",
        "updates",
        _choice("summarized", "omitted", "updates"),
        "thinking.display: updates (progress notes between tool calls), summarized or omitted",
    )
    prompt_cache: Literal["off", "5m", "1h"] = _setting(
        "PROMPT_CACHE", "5m", _choice("off", "5m", "1h"), "prompt caching: off, 5m or 1h"
    )
    tools: tuple[str, ...] = _setting(
        "TOOLS",
        (),
        _names,
        "comma-separated tools modules (package.module or package.module:attribute)",
        shown="none",
    )
    mcp_config: str = _setting(
        "MCP_CONFIG",
        "",
        _text,
        "a JSON file of MCP servers in the mcpServers shape",
        shown="unset: no MCP servers",
    )
    mcp_credentials_key: str = _setting(
        "MCP_CREDENTIALS_KEY",
        "",
        _text,
        "the Fernet key users' MCP credentials are encrypted with",
        shown="derived from `SECRET_KEY`",
    )
    mcp_server_writes: bool = _setting(
        "MCP_SERVER_WRITES",
        True,
        _switch,
        "`POST /mcp` also lists the write tools; each call waits for the user's approval",
    )
    public_url: str = _setting(
        "PUBLIC_URL",
        "",
        _text,
        "the https origin apps reach this server at: the OAuth issuer and `/mcp`'s resource",
        shown="unset: each request's own origin",
    )
    oauth_dynamic_registration: bool = _setting(
        "OAUTH_DYNAMIC_REGISTRATION",
        True,
        _switch,
        "apps may register at `/oauth/register` (RFC 7591) besides metadata documents",
    )
    cimd_allow_loopback: bool = _setting(
        "CIMD_ALLOW_LOOPBACK",
        False,
        _switch,
        "client metadata documents may be fetched from loopback addresses (tests only)",
    )
    tool_search_threshold: int = _setting(
        "TOOL_SEARCH_THRESHOLD",
        30,
        _int,
        "past this many tools, MCP tools are deferred behind tool search (0: never)",
    )
    tool_eager_input: bool = _setting(
        "TOOL_EAGER_INPUT", True, _switch, "stream tool input as the model writes it"
    )
    context_strategy: Literal["trim", "compact", "edit"] = _setting(
        "CONTEXT_STRATEGY",
        "trim",
        _choice("trim", "compact", "edit"),
        "how a conversation longer than the window is sent: trim, compact or edit",
    )
    max_tool_rounds: int = _setting(
        "MAX_TOOL_ROUNDS", 10, _int, "model calls per turn before it ends max_rounds"
    )
    upstream_max_retries: int = _setting("UPSTREAM_MAX_RETRIES", 4, _int, "retries of a model call")
    max_takeovers: int = _setting(
        "MAX_TAKEOVERS", 3, _int, "worker deaths in a row one turn survives"
    )
    # The demo model's speed is what the model does, not a bound of ours: not in Timings.
    demo_event_delay: float = _setting(
        "DEMO_EVENT_DELAY", 0.0, _float, "seconds between demo-model events (not scaled)"
    )
    # Requests, users and limits.
    max_message_chars: int = _setting(
        "MAX_MESSAGE_CHARS", 16_000, _int, "longest user message (413 above)"
    )
    max_request_bytes: int = _setting(
        "MAX_REQUEST_BYTES", 256 * 1024, _int, "largest request body (413 above)"
    )
    import_max_bytes: int = _setting(
        "IMPORT_MAX_BYTES",
        20 * 1024 * 1024,
        _int,
        "largest statement file POST /api/imports takes (413 above)",
    )
    user_daily_tokens: int | None = _setting(
        "USER_DAILY_TOKENS",
        None,
        _int,
        "tokens a user's turns may use per UTC day",
        shown="unset: unlimited",
    )
    user_max_concurrent_turns: int = _setting(
        "USER_MAX_CONCURRENT_TURNS", 4, _int, "turns one user may run at once (0: unlimited)"
    )
    rate_limit: str = _setting(
        "RATE_LIMIT", "60/minute", _text, "turns a user may start: N/second|minute|hour|day; off"
    )
    rate_limit_storage_url: str = _setting(
        "RATE_LIMIT_STORAGE_URL",
        "",
        _text,
        "where rate-limit counts live (unset: EVENT_LOG_URL if Redis, else memory://)",
        shown="`EVENT_LOG_URL` when it is `redis://`, else `memory://`",
    )
    session_rate_limit: str = _setting(
        "SESSION_RATE_LIMIT", "60/minute", _text, "sessions a user may create, as RATE_LIMIT"
    )
    user_max_sessions: int = _setting(
        "USER_MAX_SESSIONS", 10_000, _int, "sessions a user may keep (0: unlimited)"
    )
    session_messages: int = _setting(
        "SESSION_MESSAGES", 100, _int, "newest messages GET /api/sessions/<id> shows"
    )
    search_max_sessions: int = _setting(
        "SEARCH_MAX_SESSIONS", 10_000, _int, "sessions one search request may scan"
    )
    search_user_concurrency: int = _setting(
        "SEARCH_USER_CONCURRENCY", 2, _int, "searches one user may run at once per process"
    )
    search_concurrency: int = _setting(
        "SEARCH_CONCURRENCY", 4, _int, "searches running at once per process"
    )
    busy_policy: BusyPolicy = _setting(
        "BUSY_POLICY",
        DEFAULT_BUSY_POLICY,
        _choice(*BUSY_POLICIES),
        "a message sent while a turn runs: reject, queue or interrupt",
    )
    max_queued_turns: int = _setting(
        "MAX_QUEUED_TURNS", 5, _int, "messages that may wait per session"
    )
    secret_key: str = _setting(
        "SECRET_KEY",
        "",
        _text,
        "signs events tokens (unset: generated into the instance folder)",
        shown="generated into `instance/secret_key`",
    )
    cors_origins: tuple[str, ...] = _setting(
        "CORS_ORIGINS", (), _names, "comma-separated origins allowed to call /api", shown="none"
    )
    metrics_token: str | None = _setting(
        "METRICS_TOKEN",
        None,
        _text,
        "the bearer token /metrics needs",
        shown="unset: `/metrics` is open",
    )
    audit_log: str = _setting(
        "AUDIT_LOG", "stderr", _text, "where audit lines go: stderr, off or a file path"
    )
    # Processes and threads.
    http_threads: int = _setting("HTTP_THREADS", 16, _int, "threads of the host's http pool")
    store_threads: int = _setting("STORE_THREADS", 8, _int, "threads of the engine's store pool")
    tool_threads: int = _setting("TOOL_THREADS", 8, _int, "threads of the engine's tool pool")
    instance_path: str = _setting(
        "INSTANCE_PATH",
        str(HERE / "instance"),
        _text,
        "the instance folder: SQLite database, secret key, event spool",
        shown="`instance/` beside `app.py`",
    )
    log_level: str = _setting("LOG_LEVEL", "INFO", _text, "level of the Python root logger")
    time_scale: float = _setting(
        "TIME_SCALE", 1.0, _float, "multiplies every timing constant at once"
    )
    # Set by code only (tests): never read from the environment.
    testing: bool = _setting(None, False, _flag, "Flask's testing mode", key="TESTING")
    event_spool_dir: str = _setting(
        None,
        "",
        _text,
        "the event spool (default: spool/ in the instance folder)",
        key="EVENT_SPOOL_DIR",
    )
    tracing: bool = _setting(
        None, False, _flag, "traces on (from the OTEL_* variables)", key="TRACING"
    )
    timings: Timings = field(
        default_factory=Timings,
        metadata=_meta(
            None, _timings, "every timing constant, scaled by TIME_SCALE", key="TIMINGS"
        ),
    )

    def __post_init__(self) -> None:
        # The defaults that follow other settings.
        derived = {
            "database_url": f"sqlite:///{Path(self.instance_path, 'chat.db')}",
            "event_spool_dir": str(Path(self.instance_path, "spool")),
            "rate_limit_storage_url": self.event_log_url
            if self.event_log_url.startswith(("redis://", "rediss://"))
            else "memory://",
        }
        for name, value in derived.items():
            if not getattr(self, name):
                object.__setattr__(self, name, value)

    @classmethod
    def from_env(
        cls, env: Mapping[str, object] | None = None, overrides: Mapping[str, object] | None = None
    ) -> Settings:
        """Read every setting from `env` (the process's environment by default), then
        `overrides` keyed by variable (or, for a field set only by code, by its key)."""
        env = os.environ if env is None else env
        overrides = overrides or {}
        unknown = sorted(set(overrides) - set(_KEYS))
        if unknown:
            raise SettingError(f"no such setting: {', '.join(unknown)}")
        source = {**env, **overrides}
        values: dict[str, Any] = {}
        for f in fields(cls):
            key = f.metadata["key"]
            raw = source.get(key) if f.metadata["env"] else overrides.get(key)
            if not _unset(raw):
                values[f.name] = _parsed(key, f.metadata["parse"], raw)
        values.setdefault("tracing", traces_requested(source))
        if "timings" not in values:
            values["timings"] = _read_timings(source).scaled(values.get("time_scale", 1.0))
        return cls(**values)


_KEYS = {f.metadata["key"] for f in fields(Settings)} | set(TIMING_ENV.values())


def _parsed(key: str, parse: Parse, raw: object) -> Any:
    try:
        return parse(raw)
    except SettingError as err:
        raise SettingError(f"{key} {err}") from None


def _read_timings(source: Mapping[str, object]) -> Timings:
    values = {
        name: _parsed(env, _float, source[env])
        for name, env in TIMING_ENV.items()
        if not _unset(source.get(env))
    }
    return Timings(**values)


def load_timings(overrides: Mapping[str, object] | None = None) -> Timings:
    """Build Timings from the environment (or `overrides`), then apply TIME_SCALE."""
    return Settings.from_env({**os.environ, **(overrides or {})}).timings


def traces_requested(env: Mapping[str, object]) -> bool:
    """True when the standard OTEL_* variables ask for traces (the SDK's defaults do not)."""

    def text(name: str) -> str:
        value = env.get(name)
        return value.strip().lower() if isinstance(value, str) else ""

    if text("OTEL_SDK_DISABLED") == "true":
        return False
    exporters = {e.strip() for e in text("OTEL_TRACES_EXPORTER").split(",")}
    if exporters - {"", "none"}:
        return True
    endpoints = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    return "none" not in exporters and any(text(name) for name in endpoints)


def load_settings(overrides: Mapping[str, object] | None = None) -> Settings:
    """The app's settings: the environment with `overrides` over it, made ready to run."""
    return with_instance(Settings.from_env(overrides=overrides))


def with_instance(settings: Settings) -> Settings:
    """`settings` with its instance folder made and, unless SECRET_KEY is set, the secret key
    kept there (one per folder, so every worker signs tokens alike)."""
    Path(settings.instance_path).mkdir(parents=True, exist_ok=True)
    if settings.secret_key:
        return settings
    path = Path(settings.instance_path, "secret_key")
    if not path.exists():
        path.write_text(secrets.token_hex(32))
    return replace(settings, secret_key=path.read_text().strip())

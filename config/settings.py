"""The variables: every setting of the app but its durations, read from the environment once,
typed, with every default in one place (the durations are config/durations.py)."""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Literal

from config.durations import TIMING_ENV, Timings, read_timings
from config.parsing import (
    SettingError,
    choice,
    flag,
    json_object,
    meta,
    names,
    number,
    parsed,
    setting,
    switch,
    text,
    unset,
    whole,
)
from streaming.wire.events import BUSY_POLICIES, DEFAULT_BUSY_POLICY, BusyPolicy

# The instance folder's default: beside app.py (this package's parent folder).
HERE = Path(__file__).resolve().parents[1]


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


def _timings(raw: object) -> Timings:
    if not isinstance(raw, Timings):
        raise SettingError(f"must be a config.Timings, got {raw!r}")
    return raw


@dataclass(frozen=True)
class Settings:
    """Every setting of the app, read once from the environment (docs/configuration.md).

    A field's metadata holds its variable (`env`), its parser and a one-line description;
    its default is the one default. Fields set only by code (tests) have `env` None.
    """

    # The model, storage and the event log.
    database_url: str = setting(
        "DATABASE_URL",
        "",
        text,
        "any SQLAlchemy URL (unset: chat.db in the instance folder)",
        shown="`sqlite:///instance/chat.db`",
    )
    event_log_url: str = setting(
        "EVENT_LOG_URL", "memory://", text, "where turn events live: memory:// or redis://..."
    )
    anthropic_api_key: str | None = setting(
        "ANTHROPIC_API_KEY",
        None,
        text,
        "the real API's key (unset: the offline demo model)",
        shown="unset: offline demo model",
    )
    anthropic_base_url: str | None = setting(
        "ANTHROPIC_BASE_URL", None, text, "another API endpoint", shown="SDK default"
    )
    anthropic_model: str = setting(
        "ANTHROPIC_MODEL", "claude-sonnet-5-5", text, "the model of the real API"
    )
    max_tokens: int = setting("MAX_TOKENS", 4096, whole, "output token limit per model call")
    model_context_tokens: int = setting(
        "MODEL_CONTEXT_TOKENS", 200_000, whole, "the model's context window, in tokens"
    )
    model_prices: dict[str, Any] = field(
        default_factory=dict,
        metadata=meta(
            "MODEL_PRICES",
            json_object,
            "JSON object of prices per million tokens by model, over the built-in table",
            shown="built-in table",
        ),
    )
    thinking: Literal["adaptive", "between_tools"] = setting(
        "THINKING",
        "adaptive",
        choice("adaptive", "between_tools"),
        "the thinking type asked of models that take one: adaptive or between_tools",
    )
    effort: str = setting(
        "EFFORT",
        "",
        choice("", "low", "medium", "high", "xhigh", "max"),
        "output_config.effort for models that take it (unset: the model's default)",
        shown="unset: the model's default",
    )
    thinking_display: Literal["summarized", "omitted", "updates"] = setting(
        "THINKING_DISPLAY",
        "updates",
        choice("summarized", "omitted", "updates"),
        "thinking.display: updates (progress notes between tool calls), summarized or omitted",
    )
    prompt_cache: Literal["off", "5m", "1h"] = setting(
        "PROMPT_CACHE", "5m", choice("off", "5m", "1h"), "prompt caching: off, 5m or 1h"
    )
    tools: tuple[str, ...] = setting(
        "TOOLS",
        (),
        names,
        "comma-separated tools modules (package.module or package.module:attribute)",
        shown="none",
    )
    mcp_config: str = setting(
        "MCP_CONFIG",
        "",
        text,
        "a JSON file of MCP servers in the mcpServers shape",
        shown="unset: no MCP servers",
    )
    mcp_credentials_key: str = setting(
        "MCP_CREDENTIALS_KEY",
        "",
        text,
        "the Fernet key users' MCP credentials are encrypted with",
        shown="derived from `SECRET_KEY`",
    )
    mcp_server_writes: bool = setting(
        "MCP_SERVER_WRITES",
        True,
        switch,
        "`POST /mcp` also lists the write tools; each call waits for the user's approval",
    )
    public_url: str = setting(
        "PUBLIC_URL",
        "",
        text,
        "the https origin apps reach this server at: the OAuth issuer and `/mcp`'s resource",
        shown="unset: each request's own origin",
    )
    oauth_dynamic_registration: bool = setting(
        "OAUTH_DYNAMIC_REGISTRATION",
        True,
        switch,
        "apps may register at `/oauth/register` (RFC 7591) besides metadata documents",
    )
    cimd_allow_loopback: bool = setting(
        "CIMD_ALLOW_LOOPBACK",
        False,
        switch,
        "client metadata documents may be fetched from loopback addresses (tests only)",
    )
    tool_search_threshold: int = setting(
        "TOOL_SEARCH_THRESHOLD",
        30,
        whole,
        "past this many tools, MCP tools are deferred behind tool search (0: never)",
    )
    tool_eager_input: bool = setting(
        "TOOL_EAGER_INPUT", True, switch, "stream tool input as the model writes it"
    )
    context_strategy: Literal["trim", "compact", "edit"] = setting(
        "CONTEXT_STRATEGY",
        "trim",
        choice("trim", "compact", "edit"),
        "how a conversation longer than the window is sent: trim, compact or edit",
    )
    max_tool_rounds: int = setting(
        "MAX_TOOL_ROUNDS", 10, whole, "model calls per turn before it ends max_rounds"
    )
    upstream_max_retries: int = setting("UPSTREAM_MAX_RETRIES", 4, whole, "retries of a model call")
    max_takeovers: int = setting(
        "MAX_TAKEOVERS", 3, whole, "worker deaths in a row one turn survives"
    )
    # The demo model's speed is what the model does, not a bound of ours: not in Timings.
    demo_event_delay: float = setting(
        "DEMO_EVENT_DELAY", 0.0, number, "seconds between demo-model events (not scaled)"
    )
    # Requests, users and limits.
    max_message_chars: int = setting(
        "MAX_MESSAGE_CHARS", 16_000, whole, "longest user message (413 above)"
    )
    max_request_bytes: int = setting(
        "MAX_REQUEST_BYTES", 256 * 1024, whole, "largest request body (413 above)"
    )
    import_max_bytes: int = setting(
        "IMPORT_MAX_BYTES",
        20 * 1024 * 1024,
        whole,
        "largest statement file POST /api/imports takes (413 above)",
    )
    # A statement file is read in a process of its own (statements/isolated.py), within
    # these limits; CPU seconds are work, not a wait: not scaled by TIME_SCALE.
    import_read_cpu_seconds: int = setting(
        "IMPORT_READ_CPU_SECONDS", 10, whole, "CPU seconds reading one statement file may take"
    )
    import_read_memory_mib: int = setting(
        "IMPORT_READ_MEMORY_MIB", 512, whole, "address space (MiB) of the process reading a file"
    )
    import_concurrency: int = setting(
        "IMPORT_CONCURRENCY", 2, whole, "statement uploads one user may run at once, all workers"
    )
    import_process_concurrency: int = setting(
        "IMPORT_PROCESS_CONCURRENCY", 4, whole, "statement uploads running at once per process"
    )
    user_daily_tokens: int | None = setting(
        "USER_DAILY_TOKENS",
        None,
        whole,
        "tokens a user's turns may use per UTC day",
        shown="unset: unlimited",
    )
    user_max_concurrent_turns: int = setting(
        "USER_MAX_CONCURRENT_TURNS", 4, whole, "turns one user may run at once (0: unlimited)"
    )
    rate_limit: str = setting(
        "RATE_LIMIT", "60/minute", text, "turns a user may start: N/second|minute|hour|day; off"
    )
    rate_limit_storage_url: str = setting(
        "RATE_LIMIT_STORAGE_URL",
        "",
        text,
        "where rate-limit counts live (unset: EVENT_LOG_URL if Redis, else memory://)",
        shown="`EVENT_LOG_URL` when it is `redis://`, else `memory://`",
    )
    session_rate_limit: str = setting(
        "SESSION_RATE_LIMIT", "60/minute", text, "sessions a user may create, as RATE_LIMIT"
    )
    user_max_sessions: int = setting(
        "USER_MAX_SESSIONS", 10_000, whole, "sessions a user may keep (0: unlimited)"
    )
    session_messages: int = setting(
        "SESSION_MESSAGES", 100, whole, "newest messages GET /api/sessions/<id> shows"
    )
    search_max_sessions: int = setting(
        "SEARCH_MAX_SESSIONS", 10_000, whole, "sessions one search request may scan"
    )
    search_user_concurrency: int = setting(
        "SEARCH_USER_CONCURRENCY", 2, whole, "searches one user may run at once per process"
    )
    search_concurrency: int = setting(
        "SEARCH_CONCURRENCY", 4, whole, "searches running at once per process"
    )
    busy_policy: BusyPolicy = setting(
        "BUSY_POLICY",
        DEFAULT_BUSY_POLICY,
        choice(*BUSY_POLICIES),
        "a message sent while a turn runs: reject, queue or interrupt",
    )
    max_queued_turns: int = setting(
        "MAX_QUEUED_TURNS", 5, whole, "messages that may wait per session"
    )
    secret_key: str = setting(
        "SECRET_KEY",
        "",
        text,
        "signs events tokens (unset: generated into the instance folder)",
        shown="generated into `instance/secret_key`",
    )
    cors_origins: tuple[str, ...] = setting(
        "CORS_ORIGINS", (), names, "comma-separated origins allowed to call /api", shown="none"
    )
    metrics_token: str | None = setting(
        "METRICS_TOKEN",
        None,
        text,
        "the bearer token /metrics needs",
        shown="unset: `/metrics` is open",
    )
    audit_log: str = setting(
        "AUDIT_LOG", "stderr", text, "where audit lines go: stderr, off or a file path"
    )
    # Processes and threads.
    http_threads: int = setting("HTTP_THREADS", 16, whole, "threads of the host's http pool")
    store_threads: int = setting("STORE_THREADS", 8, whole, "threads of the engine's store pool")
    tool_threads: int = setting("TOOL_THREADS", 8, whole, "threads of the engine's tool pool")
    instance_path: str = setting(
        "INSTANCE_PATH",
        str(HERE / "instance"),
        text,
        "the instance folder: SQLite database, secret key, event spool",
        shown="`instance/` beside `app.py`",
    )
    log_level: str = setting("LOG_LEVEL", "INFO", text, "level of the Python root logger")
    time_scale: float = setting(
        "TIME_SCALE", 1.0, number, "multiplies every timing constant at once"
    )
    # Set by code only (tests): never read from the environment.
    testing: bool = setting(None, False, flag, "Flask's testing mode", key="TESTING")
    event_spool_dir: str = setting(
        None,
        "",
        text,
        "the event spool (default: spool/ in the instance folder)",
        key="EVENT_SPOOL_DIR",
    )
    tracing: bool = setting(
        None, False, flag, "traces on (from the OTEL_* variables)", key="TRACING"
    )
    timings: Timings = field(
        default_factory=Timings,
        metadata=meta(None, _timings, "every timing constant, scaled by TIME_SCALE", key="TIMINGS"),
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
            if not unset(raw):
                values[f.name] = parsed(key, f.metadata["parse"], raw)
        values.setdefault("tracing", traces_requested(source))
        if "timings" not in values:
            values["timings"] = read_timings(source).scaled(values.get("time_scale", 1.0))
        return cls(**values)


_KEYS = {f.metadata["key"] for f in fields(Settings)} | set(TIMING_ENV.values())


def load_timings(overrides: Mapping[str, object] | None = None) -> Timings:
    """Build Timings from the environment (or `overrides`), then apply TIME_SCALE."""
    return Settings.from_env({**os.environ, **(overrides or {})}).timings


def traces_requested(env: Mapping[str, object]) -> bool:
    """True when the standard OTEL_* variables ask for traces (the SDK's defaults do not)."""

    def lowered(name: str) -> str:
        value = env.get(name)
        return value.strip().lower() if isinstance(value, str) else ""

    if lowered("OTEL_SDK_DISABLED") == "true":
        return False
    exporters = {e.strip() for e in lowered("OTEL_TRACES_EXPORTER").split(",")}
    if exporters - {"", "none"}:
        return True
    endpoints = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    return "none" not in exporters and any(lowered(name) for name in endpoints)


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

"""Wire the engine once from the app's settings: stores, log, model, tools, service."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from config import Settings, Timings
from engine.events.log import Confirm, EventLog
from engine.events.memory import MemoryEventLog
from engine.lifecycle import Engine
from engine.limits import Limits, UserLimits
from engine.ratelimit import RateLimiter
from engine.runtime import Runtime
from engine.session_limits import session_limits
from engine.store.durable import Store
from engine.store.messages import MessageStore
from engine.store.prompts import PromptStore
from engine.store.turns import TurnStore
from engine.store.workers import WorkerRegistry
from engine.turns.pacing import Pacer
from engine.turns.shared import TurnDeps
from engine.turns.tools import ToolRunner
from engine.turns.window import ContextWindow
from engine.upstream.client import ModelClient, Upstream, build_model_client
from engine.upstream.estimate import request_tokens
from engine.upstream.retry import RetryPolicy
from models.db import Database
from tools import default_registry
from tools.mcp_servers.config import load_config

if TYPE_CHECKING:
    from tools.mcp_servers.links import McpHub


def build_engine(settings: Settings, db: Database, upstream: Upstream) -> Engine:
    """Return the engine on `upstream` (the model the app picked); it runs once a host starts
    it (or the first request does)."""
    timings = settings.timings
    runtime = Runtime(settings.store_threads, settings.tool_threads)
    store = Store(runtime.store_pool, timings)
    messages = MessageStore(db)
    registry = default_registry(settings.tools)
    hub = mcp_hub(settings, db, store)
    model = build_model_client(settings, upstream)
    running = settings.user_max_concurrent_turns
    limits = Limits(
        daily_tokens=settings.user_daily_tokens or None,
        max_running=running if running > 0 else None,
        retry_after=timings.busy_retry_after,
    )
    rate = RateLimiter(settings.rate_limit, settings.rate_limit_storage_url)
    user_limits = UserLimits(db, limits, rate=rate)
    sessions = session_limits(
        settings.session_rate_limit, settings.rate_limit_storage_url, settings.user_max_sessions
    )
    turns = TurnStore(db, user_limits.admission, sessions)

    async def confirm(turn_id: str, lease: int) -> bool:
        return await store.durable(turns.holds, turn_id, lease)

    events = make_event_log(settings.event_log_url, timings, settings.event_spool_dir, confirm)
    deps = TurnDeps(
        turns=turns,
        messages=messages,
        store=store,
        events=events,
        model=model,
        tools=ToolRunner(registry, messages, db, runtime.tool_pool, store, timings, hub),
        tool_definitions=registry.definitions(eager=settings.tool_eager_input),
        timings=timings,
        pacer=Pacer(timings.stream_batch, timings.network_wait),
        max_rounds=settings.max_tool_rounds,
        retry=RetryPolicy.of(timings, settings.upstream_max_retries),
        max_takeovers=settings.max_takeovers,
        busy_policy=settings.busy_policy,
        max_queued=settings.max_queued_turns,
        window=context_window(settings.model_context_tokens, model),
        eager_input=settings.tool_eager_input,
        tool_search_threshold=settings.tool_search_threshold,
        prompts=PromptStore(db),
    )
    return Engine(runtime, deps, WorkerRegistry(db), user_limits)


def mcp_hub(settings: Settings, db: Database, store: Store) -> McpHub | None:
    """The MCP servers of MCP_CONFIG, if any (only then is the mcp SDK imported)."""
    servers = load_config(settings.mcp_config)
    if not servers:
        return None
    from engine.store.credentials import Credentials, fernet_key
    from tools.mcp_servers.links import McpHub

    key = fernet_key(settings.mcp_credentials_key, settings.secret_key)
    credentials = Credentials(db, key)

    async def credential(user_id: int, server: str) -> str | None:
        return await store.durable(credentials.get, user_id, server)

    return McpHub(servers, settings.timings, credential)


def context_window(context_tokens: int, model: ModelClient) -> ContextWindow:
    """Return the window every request is fitted into: the model's, less its output budget."""

    # The estimate for the last tools list and day: both change rarely, if ever.
    last: tuple[list[dict[str, Any]], date, int] | None = None

    def overhead(tools: list[dict[str, Any]]) -> int:
        nonlocal last
        day = model.today()
        if last is None or last[0] is not tools or last[1] != day:
            last = (tools, day, request_tokens(model.request([], tools)))
        return last[2]

    return ContextWindow(context_tokens, model.max_tokens, overhead, model.strategy)


def make_event_log(
    url: str,
    timings: Timings,
    spool_dir: str | Path | None = None,
    confirm: Confirm | None = None,
) -> EventLog:
    """Return the in-process log for `memory://`, a Redis Streams log for `redis://...`.

    `confirm` tells the Redis log whether a lease still holds its turn (by the database).
    """
    if url.startswith(("redis://", "rediss://", "unix://")):
        from engine.events.redis_log import RedisEventLog

        return RedisEventLog(url, timings, confirm)
    if url != "memory://":
        raise ValueError(f"EVENT_LOG_URL must be memory:// or redis://..., not {url!r}")
    return MemoryEventLog(str(spool_dir) if spool_dir else None, timings.log_retain)

"""Wire the engine once from the app's configuration: stores, log, model, tools, service."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

from config import Timings
from engine.events.log import Confirm, EventLog
from engine.events.memory import MemoryEventLog
from engine.lifecycle import Engine
from engine.limits import Limits, UserLimits
from engine.ratelimit import RateLimiter, storage_url
from engine.runtime import Runtime
from engine.session_limits import session_limits
from engine.store.durable import Store
from engine.store.messages import MessageStore
from engine.store.turns import TurnStore
from engine.store.workers import WorkerRegistry
from engine.turns.deps import TurnDeps
from engine.turns.pacing import Pacer
from engine.turns.tools import ToolRunner
from engine.turns.window import ContextWindow
from engine.upstream.client import ModelClient, build_model_client
from engine.upstream.retry import RetryPolicy
from engine.upstream.tokens import request_tokens
from models.db import Database
from tools import default_registry


def build_engine(config: dict[str, Any], db: Database) -> Engine:
    """Return the engine; it runs once a host starts it (or the first request does)."""
    timings: Timings = config["TIMINGS"]
    runtime = Runtime(config["STORE_THREADS"], config["TOOL_THREADS"])
    store = Store(runtime.store_pool, timings)
    messages = MessageStore(db)
    registry = default_registry()
    model = build_model_client(config, timings)
    running = config.get("USER_MAX_CONCURRENT_TURNS", 4)
    limits = Limits(
        config.get("USER_DAILY_TOKENS") or None,
        running if running > 0 else None,
        timings.busy_retry_after,
    )
    rate = RateLimiter(config.get("RATE_LIMIT", "off"), storage_url(config))
    user_limits = UserLimits(db, limits, rate=rate)
    sessions = session_limits(
        config.get("SESSION_RATE_LIMIT", "off"),
        storage_url(config),
        config.get("USER_MAX_SESSIONS", 0),
    )
    turns = TurnStore(db, user_limits.admission, sessions)

    async def confirm(turn_id: str, lease: int) -> bool:
        return await store.durable(turns.holds, turn_id, lease)

    events = make_event_log(
        config["EVENT_LOG_URL"], timings, config.get("EVENT_SPOOL_DIR"), confirm
    )
    deps = TurnDeps(
        turns=turns,
        messages=messages,
        store=store,
        events=events,
        model=model,
        tools=ToolRunner(registry, messages, db, runtime.tool_pool, store, timings),
        tool_definitions=registry.definitions(eager=config.get("TOOL_EAGER_INPUT", True)),
        timings=timings,
        pacer=Pacer(timings.stream_batch, timings.network_wait),
        max_rounds=config["MAX_TOOL_ROUNDS"],
        retry=RetryPolicy(
            max_retries=config["UPSTREAM_MAX_RETRIES"],
            budget=timings.retry_budget,
            base=timings.backoff_base,
            cap=timings.backoff_cap,
        ),
        max_takeovers=config["MAX_TAKEOVERS"],
        busy_policy=config["BUSY_POLICY"],
        max_queued=config.get("MAX_QUEUED_TURNS", 5),
        window=context_window(config, model),
    )
    return Engine(runtime, deps, WorkerRegistry(db), user_limits)


def context_window(config: dict[str, Any], model: ModelClient) -> ContextWindow:
    """Return the window every request is fitted into: the model's, less its output budget."""

    # The estimate for the last tools list and day: both change rarely, if ever.
    last: tuple[list[dict[str, Any]], date, int] | None = None

    def overhead(tools: list[dict[str, Any]]) -> int:
        nonlocal last
        day = model.today()
        if last is None or last[0] is not tools or last[1] != day:
            last = (tools, day, request_tokens(model.request([], tools)))
        return last[2]

    return ContextWindow(
        config.get("MODEL_CONTEXT_TOKENS", 200_000), model.max_tokens, overhead, model.strategy
    )


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

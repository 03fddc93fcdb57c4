"""What every turn of a worker shares, wired once and never changed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from config import Timings
from engine.events.log import EventLog
from engine.store.durable import Store
from engine.store.messages import MessageStore
from engine.store.prompts import PromptStore
from engine.store.turns import TurnStore
from engine.turns.pacing import Pacer
from engine.turns.tools import ToolRunner
from engine.turns.window import ContextWindow
from engine.upstream.client import ModelClient
from engine.upstream.retry import RetryPolicy
from streaming.wire.events import DEFAULT_BUSY_POLICY, BusyPolicy


@dataclass
class WorkerState:
    """What changes about the worker while it runs (state, not wiring)."""

    draining: bool = False


@dataclass(frozen=True)
class TurnDeps:
    """The stores, log, model, tools and limits every turn of this worker uses."""

    turns: TurnStore
    messages: MessageStore
    store: Store
    events: EventLog
    model: ModelClient
    tools: ToolRunner
    tool_definitions: list[dict[str, Any]]
    timings: Timings
    pacer: Pacer
    max_rounds: int
    retry: RetryPolicy
    max_takeovers: int = 3
    # A message sent while a turn runs on its session (BUSY_POLICY), and how many may wait.
    busy_policy: BusyPolicy = DEFAULT_BUSY_POLICY
    max_queued: int = 5
    window: ContextWindow = field(default_factory=ContextWindow)
    worker: WorkerState = field(default_factory=WorkerState)
    eager_input: bool = False
    tool_search_threshold: int = 0
    # Each conversation's own copy of system and tools, and its binding flag.
    prompts: PromptStore | None = None

    def tools_sent(self) -> list[dict[str, Any]]:
        """The tools of a model call: ours, then the MCP servers' (one list while unchanged)."""
        return self.tools.definitions(
            self.tool_definitions, self.eager_input, self.tool_search_threshold
        )

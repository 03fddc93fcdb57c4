"""Run real engine turns with a scripted model over any tool registry (and MCP hub)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any

from config import Timings
from engine.store.turns import NewTurn
from engine.turns.shared import TurnDeps
from engine.turns.tools import ToolRunner
from engine.turns.turn import Turn
from models.db import Database
from services.sessions import create_session
from tests.engine.conftest import make_deps, run_to_end
from tests.helpers import ScriptedModel
from tools.registry import ToolRegistry


class ToolsModel(ScriptedModel):
    """A scripted model that also records the tools each request sent."""

    def __init__(self, scripts: list[Any]) -> None:
        super().__init__(scripts)
        self.tools: list[list[dict[str, Any]]] = []

    @asynccontextmanager
    async def open(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], **shape: Any
    ) -> AsyncIterator[AsyncIterator[bytes]]:
        self.tools.append(tools)
        async with super().open(messages, tools, **shape) as stream:
            yield stream


def deps_for(
    db: Database,
    pool: ThreadPoolExecutor,
    model: Any,
    registry: ToolRegistry,
    timings: Timings,
    **more: Any,
) -> TurnDeps:
    """Turn deps whose tools are `registry`'s (and `more`, e.g. an MCP hub)."""
    base = make_deps(db, pool, model, timings)
    runner = ToolRunner(registry, base.messages, db, pool, base.store, timings, **more)
    return replace(base, tools=runner, tool_definitions=registry.definitions())


async def run_turn(
    deps: TurnDeps, user_id: int, question: str, session_id: str | None = None
) -> tuple[str, list[Any], NewTurn]:
    """Start and run one turn to its end in this loop."""
    sid = session_id or create_session(deps.messages.db, user_id)["id"]
    new, lease, _ = deps.turns.start_turn(user_id, sid, question)
    deps.events.open(new.turn_id)
    status, events = await run_to_end(Turn(deps, new, user_id, lease), deps, new)
    return status, events, new


def run(coro: Callable[[], Awaitable[Any]]) -> Any:
    """Run `coro()` in a fresh loop."""
    return asyncio.run(coro())  # type: ignore[arg-type]

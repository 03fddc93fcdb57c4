"""Fixtures to run the turn engine against scripted model streams and toy tools."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from config import Timings
from engine.events.memory import MemoryEventLog
from engine.store.durable import Store
from engine.store.messages import MessageStore
from engine.store.turns import NewTurn, TurnStore
from engine.turns.pacing import Pacer
from engine.turns.shared import TurnDeps
from engine.turns.tools import ToolRunner
from engine.turns.turn import Turn
from engine.upstream.retry import RetryPolicy
from models.db import Database
from services.sessions import create_session
from streaming.wire.protocol import decode_stream
from tests.engine.toys import CALLS, RELEASE_SLOW, TOY_TOOLS
from tests.helpers import ScriptedModel

SCALE = 0.05


class Run:
    """The outcome of one engine turn: status, events, model requests, tool calls."""

    def __init__(
        self,
        status: str,
        events: list[Any],
        model: ScriptedModel,
        store: MessageStore,
        session_id: str,
    ) -> None:
        self.status, self.events, self.model = status, events, model
        self.store, self.session_id = store, session_id

    def types(self) -> list[str]:
        return [t for _, t, _ in self.events]

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [d for _, t, d in self.events if t == kind]


def make_deps(
    db: Database,
    pool: ThreadPoolExecutor,
    model: Any,
    timings: Timings | None = None,
    max_rounds: int = 10,
    retries: int = 4,
    events: Any = None,
) -> TurnDeps:
    """The deps of a turn against `model`, the toy tools and an in-process log."""
    # Every timing scaled together (stall 3 s, backoff 25 ms, tool timeout 1 s...).
    timings = timings or Timings().scaled(SCALE)
    messages, store = MessageStore(db), Store(pool, timings)
    return TurnDeps(
        turns=TurnStore(db),
        messages=messages,
        store=store,
        events=events if events is not None else MemoryEventLog(None, timings.log_retain),
        model=model,
        tools=ToolRunner(TOY_TOOLS, messages, db, pool, store, timings),
        tool_definitions=TOY_TOOLS.definitions(),
        timings=timings,
        pacer=Pacer(0.0, timings.network_wait),
        max_rounds=max_rounds,
        retry=RetryPolicy(
            max_retries=retries,
            budget=timings.retry_budget,
            base=timings.backoff_base,
            cap=timings.backoff_cap,
        ),
    )


async def run_to_end(turn: Turn, deps: TurnDeps, new: NewTurn) -> tuple[str, list[Any]]:
    """Run a turn in this loop; return its status and every event its log holds."""
    status = await turn.run()
    chunk = await deps.events.read(new.turn_id, 0, 0)  # None once a fenced turn left the log
    return status, decode_stream(chunk.frames) if chunk else []


@pytest.fixture
def run_turn(db: Database, user: tuple[int, str]) -> Iterator[Callable[..., Run]]:
    """Run one turn with scripted model output; returns a Run."""
    pool = ThreadPoolExecutor(max_workers=4)
    CALLS.clear()
    RELEASE_SLOW.clear()

    def run(
        scripts: list[list[dict[str, Any]]],
        question: str = "What is the weather in SF?",
        max_rounds: int = 10,
        session_id: str | None = None,
        scale: float = SCALE,
        before: Callable[[Turn], None] | None = None,
        retries: int = 4,
    ) -> Run:
        model = ScriptedModel(scripts)
        deps = make_deps(db, pool, model, Timings().scaled(scale), max_rounds, retries)
        sid = session_id or create_session(db, user[0])["id"]
        new, lease, _ = deps.turns.start_turn(user[0], sid, question)

        async def main() -> tuple[str, list[Any]]:
            deps.events.open(new.turn_id)
            turn = Turn(deps, new, user[0], lease)
            if before:
                before(turn)
            return await run_to_end(turn, deps, new)

        status, events = asyncio.run(main())
        return Run(status, events, model, deps.messages, sid)

    yield run
    RELEASE_SLOW.set()
    pool.shutdown(wait=False)

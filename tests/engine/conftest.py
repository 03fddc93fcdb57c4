"""Fixtures to run the turn engine against scripted model streams and toy tools."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from engine.events.memory import MemoryEventLog
from engine.store.messages import MessageStore
from engine.store.turns import TurnStore
from engine.turns.runner import TurnDeps, TurnRunner
from engine.turns.tool_exec import ToolExecutor
from engine.upstream.retry import RetryPolicy
from models.db import Database
from services.sessions import create_session
from streaming.protocol import decode_stream
from tests.engine.toys import CALLS, TOY_TOOLS
from tests.helpers import ScriptedModel


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


@pytest.fixture
def run_turn(db: Database, user: tuple[int, str]) -> Iterator[Callable[..., Run]]:
    """Run one turn with scripted model output; returns a Run."""
    pool = ThreadPoolExecutor(max_workers=4)
    CALLS.clear()

    def run(
        scripts: list[list[dict[str, Any]]],
        question: str = "What is the weather in SF?",
        max_rounds: int = 10,
        session_id: str | None = None,
        tool_timeout: float = 5.0,
        before: Callable[[TurnRunner], None] | None = None,
        retries: int = 4,
    ) -> Run:
        turns, store = TurnStore(db), MessageStore(db)
        log = MemoryEventLog()
        model = ScriptedModel(scripts)
        deps = TurnDeps(
            turns=turns,
            messages=store,
            events=log,
            model=model,  # type: ignore[arg-type]
            tools=ToolExecutor(TOY_TOOLS, store, db, pool, tool_timeout),
            tool_definitions=TOY_TOOLS.definitions(),
            max_rounds=max_rounds,
            retry=RetryPolicy(max_retries=retries, budget=10, base=0.001),
        )
        sid = session_id or create_session(db, user[0])["id"]
        new, lease = turns.start_turn(user[0], sid, question)
        log.open(new.turn_id)
        runner = TurnRunner(deps, new, user[0], lease)
        if before:
            before(runner)
        status = runner.run()
        chunk = log.read(new.turn_id, 0, 0)  # None once a fenced runner left the log
        return Run(status, decode_stream(chunk.frames) if chunk else [], model, store, sid)

    yield run
    pool.shutdown(wait=False)

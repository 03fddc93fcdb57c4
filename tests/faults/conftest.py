"""The app pointed at the fault-injecting upstream, with seeded finance data."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from demo_data.generator import seed_finance
from services.sessions import create_session
from streaming.wire.protocol import decode_stream
from tests.conftest import make_user
from tests.faults.upstream import FaultyUpstream
from tools.registry import ToolContext, ToolRegistry

# Stall 3 s, first token 6 s, retry budget 3 s, heartbeat 50 ms, stale after 300 ms...
RIG_SCALE = 0.05


class Rig:
    """An app, its upstream, a seeded user, and a count of real tool executions."""

    def __init__(self, app: Any, upstream: FaultyUpstream, user_id: int, token: str) -> None:
        self.app, self.upstream, self.user_id, self.token = app, upstream, user_id, token
        self.turns = app.extensions["turns"]
        self.timings = app.config["SETTINGS"].timings
        self.db = app.extensions["db"]
        # How many times each tool_use id's tool really ran (not refused, not replayed).
        self.executed: Counter[str] = Counter()
        registry: ToolRegistry = self.turns.deps.tools.registry
        original = registry.execute

        def counting(name: str, raw_input: Any, ctx: ToolContext) -> Any:
            self.executed[ctx.tool_use_id] += 1
            return original(name, raw_input, ctx)

        registry.execute = counting  # type: ignore[method-assign]

    @property
    def executions(self) -> int:
        """Real tool executions, all ids together."""
        return sum(self.executed.values())

    def run(self, question: str, session_id: str | None = None) -> tuple[str, list[Any]]:
        """Run one turn to its end; return (session_id, decoded events)."""
        sid = session_id or create_session(self.db, self.user_id)["id"]
        turn = self.turns.start(self.user_id, sid, question)
        assert self.turns.wait(turn.turn_id, timeout=60)
        chunk = self.turns.peek(turn.turn_id, 0)
        return sid, decode_stream(chunk.frames)


@pytest.fixture
def rig(app_config: dict[str, Any], db: Any) -> Iterator[Rig]:
    """The app against a FaultyUpstream, every timing at 1/20 of its default."""
    from app import create_app

    upstream = FaultyUpstream()
    config = {
        **app_config,
        "ANTHROPIC_API_KEY": "sk-test",
        "ANTHROPIC_BASE_URL": upstream.url,
        "TIME_SCALE": RIG_SCALE,
    }
    app = create_app(config)
    user_id, token = make_user(db, "faulty")
    seed_finance(db, user_id, months=3, seed=5)
    yield Rig(app, upstream, user_id, token)
    app.extensions["engine"].close()
    app.extensions["db"].dispose()
    upstream.close()

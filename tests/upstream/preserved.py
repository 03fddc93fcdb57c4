"""Drive the real app against the double of the models of today (tests/upstream/api_double.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from demo_data.generator import seed_finance
from engine.store.starts import Ask
from models import ChatSession, Turn
from models.db import Database
from services.sessions import create_session, get_turn
from streaming.wire.protocol import decode_stream
from tests.conftest import make_user
from tests.upstream.api_double import ApiDouble

Event = tuple[int, str, dict[str, Any]]


@dataclass
class Done:
    """A finished turn: its status and every event its stream carried."""

    turn_id: str
    status: str
    events: list[Event]

    def of(self, kind: str) -> list[dict[str, Any]]:
        """The payloads of one event type, in order."""
        return [data for _, name, data in self.events if name == kind]


class Chat:
    """One session of a seeded user, on an app whose model is the double."""

    def __init__(
        self,
        double: ApiDouble,
        db_url: str,
        tmp_path: Path,
        session_id: str | None = None,
        user_id: int | None = None,
        **config: Any,
    ) -> None:
        from app import create_app

        self.app = create_app(
            {
                "TESTING": True,
                "DATABASE_URL": db_url,
                "ANTHROPIC_API_KEY": "sk-double",
                "ANTHROPIC_BASE_URL": double.url,
                "SECRET_KEY": "preserved",
                "EVENT_SPOOL_DIR": str(tmp_path / "spool"),
                **config,
            }
        )
        self.double = double
        self.service = self.app.extensions["turns"]
        self.db: Database = self.app.extensions["db"]
        if user_id is None:
            user_id, _ = make_user(self.db, "preserved")
            seed_finance(self.db, user_id, months=3, seed=7)
        self.user_id = user_id
        self.session_id = session_id or create_session(self.db, user_id)["id"]

    @property
    def deps(self) -> Any:
        """The engine's shared turn dependencies."""
        return self.service.deps

    def ask(self, what: str | Ask) -> Done:
        """Start a turn (a message, an edit, a regenerate) and wait for its end."""
        started = self.service.start(self.user_id, self.session_id, what)
        return self.done(started.turn_id)

    def done(self, turn_id: str) -> Done:
        """Wait for a turn to end; return it."""
        if not self.service.wait(turn_id, timeout=60):
            raise TimeoutError(f"turn {turn_id} did not finish")
        status = get_turn(self.db, self.user_id, turn_id)["status"]
        return Done(turn_id, status, decode_stream(self.service.peek(turn_id, 0).frames))

    def approve(self, turn: Done) -> Done:
        """Approve every call the paused `turn` asked about; return the turn that goes on."""
        continuation = None
        for request in turn.of("approval_requested"):
            decision = self.service.decide(
                self.user_id, turn.turn_id, request["tool_use_id"], True, None
            )
            continuation = decision.continuation or continuation
        assert continuation is not None, "the last decision starts the continuation"
        return self.done(continuation)

    def stored(self) -> list[dict[str, Any]]:
        """The active branch as the engine reads it."""
        return list(self.deps.messages.conversation(self.session_id))

    def session(self) -> ChatSession:
        """The session's row."""
        with self.db.read() as s:
            row = s.get(ChatSession, self.session_id)
            assert row is not None
            return row

    def turn_row(self, turn_id: str) -> Turn:
        """A turn's row."""
        with self.db.read() as s:
            row = s.get(Turn, turn_id)
            assert row is not None
            return row

    def close(self) -> None:
        """Stop the engine and let the database go."""
        self.app.extensions["engine"].close()
        self.db.dispose()

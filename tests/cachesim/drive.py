"""Drive the scripted conversation through the real app against a CachingUpstream."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from demo_data.generator import seed_finance
from models import ApiToken, User
from models.db import Database
from services.sessions import create_session, get_turn
from tests.cachesim.rules import Usage
from tests.cachesim.script import Turn, conversation, reply_for
from tests.cachesim.upstream import CachingUpstream
from tools.finance.clock import today as finance_today


@dataclass
class Conversation:
    """What one run sent and was billed: request bodies, their usage, each turn's status."""

    bodies: list[dict[str, Any]] = field(default_factory=list)
    usages: list[Usage] = field(default_factory=list)
    statuses: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)

    def billed(self) -> float:
        """Input tokens billed over the run, in base-price equivalents."""
        return sum(usage.billed() for usage in self.usages)


def converse(
    db_url: str,
    mode: str,
    turns: int | list[int] = 10,
    **config: Any,
) -> Conversation:
    """Run scripted turns (the first n, or these indexes) in one session; return the record."""
    from app import create_app

    every = conversation(finance_today())
    chosen = range(turns) if isinstance(turns, int) else turns
    script: list[Turn] = [every[k] for k in chosen]
    out = Conversation()
    with CachingUpstream(lambda body: reply_for(body, script)) as upstream:
        app = create_app(
            {
                "TESTING": True,
                "DATABASE_URL": db_url,
                "ANTHROPIC_API_KEY": "sk-sim",
                "ANTHROPIC_BASE_URL": upstream.url,
                "SECRET_KEY": "cache-sim",
                "PROMPT_CACHE": mode,
                **config,
            }
        )
        service, db = app.extensions["turns"], app.extensions["db"]
        try:
            user_id = _user(db)
            seed_finance(db, user_id, months=6, seed=11)
            session_id = create_session(db, user_id)["id"]
            for turn in script:
                started = service.start(user_id, session_id, turn.question)
                if not service.wait(started.turn_id, timeout=60):
                    raise TimeoutError(f"turn {started.turn_id} did not finish")
                out.statuses.append(get_turn(db, user_id, started.turn_id)["status"])
        finally:
            app.extensions["engine"].close()
            db.dispose()
        out.bodies, out.usages = upstream.bodies, upstream.usages
        out.rejected = upstream.rejected
    return out


def _user(db: Database) -> int:
    with db.transaction() as s:
        user = User(name="cache-sim")
        row, _ = ApiToken.issue(user)
        s.add_all([user, row])
        s.flush()
        return user.id

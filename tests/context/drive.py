"""Drive a long conversation through the real app against a caching, windowed upstream."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from demo_data.generator import seed_finance
from demo_model.brain import Reply
from models import ApiToken, User
from models.db import Database
from services.sessions import create_session, get_session, get_turn
from streaming.wire.protocol import decode_stream
from tests.cachesim.context import Managed
from tests.cachesim.rules import Usage
from tests.cachesim.script import Turn, asks, conversation, next_reply
from tests.cachesim.upstream import CachingUpstream
from tools.finance.clock import today as finance_today

NUMBER = re.compile(r"\(#(\d+)\)\s*$")


@dataclass
class Long:
    """What one long conversation sent, was billed and stored, turn by turn."""

    session_id: str = ""
    bodies: list[dict[str, Any]] = field(default_factory=list)
    usages: list[Usage] = field(default_factory=list)
    too_long: list[int] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    # What the upstream billed (a compacted request is two prompts) and how it managed each.
    prompts: list[dict[str, Any]] = field(default_factory=list)
    managed: list[Managed] = field(default_factory=list)
    served: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    statuses: list[str] = field(default_factory=list)
    events: list[list[tuple[int, str, dict[str, Any]]]] = field(default_factory=list)
    stored: list[dict[str, Any]] = field(default_factory=list)
    shown: dict[str, Any] = field(default_factory=dict)

    def billed(self) -> float:
        """Input tokens billed over the run, in base-price equivalents."""
        return sum(usage.billed() for usage in self.usages)

    def uncached(self) -> int:
        """Input tokens the same requests hold, cached or not."""
        return sum(usage.total for usage in self.usages)


def question(k: int, script: list[Turn], pad: int = 0) -> str:
    """The k-th question: the script's, numbered so the upstream knows which turn it is,
    with about `pad` characters of a pasted statement before the number."""
    text = script[k % len(script)].question
    if pad:
        # Each line is over 20 characters: pad // 20 + 1 of them hold the `pad` kept (building
        # `pad` lines to keep a thirtieth of them cost 2 s of CPU a 40-turn conversation).
        lines = (
            f"2025-{1 + d % 12:02d}-{1 + d % 28:02d} purchase {k}.{d} {d % 97}.50;"
            for d in range(pad // 20 + 1)
        )
        pasted = " ".join(lines)[:pad]
        text = f"{text} Here is my statement: {pasted}"
    return f"{text} (#{k})"


def reply(body: dict[str, Any], script: list[Turn]) -> Reply:
    """The scripted reply to a request, found from its last question (earlier ones may be gone)."""
    messages = body.get("messages") or []
    asked = [i for i, m in enumerate(messages) if m.get("role") == "user" and asks(m)]
    last = asked[-1]
    k = int(NUMBER.search(_text(messages[last])).group(1))  # type: ignore[union-attr]
    turn = script[k % len(script)]
    return next_reply(messages, last, turn, f"long_{k:02d}", body)


def _text(message: dict[str, Any]) -> str:
    content = message["content"]
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content if b.get("type") == "text")


def converse_long(
    db_url: str,
    turns: int | list[int],
    window: int,
    density: float = 1.0,
    pad: int = 0,
    **config: Any,
) -> Long:
    """Run scripted turns (the first n, or these numbers) in one session against an upstream
    whose context window holds `window` tokens; each question carries `pad` more characters."""
    from app import create_app

    script = conversation(finance_today())
    out = Long()
    upstream = CachingUpstream(lambda body: reply(body, script), window=window, density=density)
    app = create_app(
        {
            "TESTING": True,
            "DATABASE_URL": db_url,
            "ANTHROPIC_API_KEY": "sk-sim",
            "ANTHROPIC_BASE_URL": upstream.url,
            "SECRET_KEY": "context-sim",
            **config,
        }
    )
    service, db = app.extensions["turns"], app.extensions["db"]
    try:
        user_id = _user(db)
        seed_finance(db, user_id, months=6, seed=11)
        out.session_id = create_session(db, user_id)["id"]
        for k in range(turns) if isinstance(turns, int) else turns:
            started = service.start(user_id, out.session_id, question(k, script, pad))
            if not service.wait(started.turn_id, timeout=60):
                raise TimeoutError(f"turn {started.turn_id} did not finish")
            out.statuses.append(get_turn(db, user_id, started.turn_id)["status"])
            chunk = service.peek(started.turn_id, 0)
            out.events.append(decode_stream(chunk.frames))
        out.stored = service.deps.messages.conversation(out.session_id)
        # Every message shown, however long the conversation (the detail holds the newest).
        out.shown = get_session(db, user_id, out.session_id, app.extensions["prices"], 10**6)
    finally:
        app.extensions["engine"].close()
        upstream.close()
        db.dispose()
    out.bodies, out.usages = upstream.bodies, upstream.usages
    out.too_long, out.rejected = upstream.too_long, upstream.rejected
    out.requests, out.served = upstream.requests, upstream.served
    out.prompts, out.managed = upstream.prompts, upstream.managed
    return out


def _user(db: Database) -> int:
    with db.transaction() as s:
        user = User(name="context-sim")
        row, _ = ApiToken.issue(user)
        s.add_all([user, row])
        s.flush()
        return user.id

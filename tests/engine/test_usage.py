"""A model call's usage is stored with its message, a discarded attempt's too."""

from __future__ import annotations

from typing import Any

from models.db import Database
from services.pricing import price_table
from services.sessions import get_session, get_turn, message_dict
from tests.engine.streams import answer, message_start, text_block


def _total(messages: list[dict[str, Any]], key: str) -> int:
    return sum((m["usage"] or {}).get(key, 0) for m in messages)


def test_a_discarded_attempt_keeps_its_usage_in_the_totals(
    run_turn: Any, db: Database, user: tuple[int, str]
) -> None:
    broken = [message_start("msg_x"), *text_block(0, "Half")]  # the stream ends early
    run = run_turn([broken, answer("Whole.")])
    assert run.status == "completed"
    turn_id = run.of("turn_start")[0]["turn_id"]
    turn = get_turn(db, user[0], turn_id, price_table())
    rows = [message_dict(m) for m in run.store.turn_messages(turn_id)]
    discarded = [m for m in rows if m["status"] == "discarded"]
    shown = get_session(db, user[0], run.session_id, price_table())
    assert discarded[0]["id"] not in {m["id"] for m in shown["messages"]}
    assert shown["usage"]["input_tokens"] == _total(rows, "input_tokens"), "every attempt paid"
    assert len(discarded) == 1 and discarded[0]["usage"]["input_tokens"] > 0
    assert turn["usage"]["model_calls"] == 2
    assert turn["usage"]["input_tokens"] == _total(rows, "input_tokens")
    assert turn["cost"]["unpriced_models"] == ["m"]

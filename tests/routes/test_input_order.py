"""A stored tool call's input keeps the order the model wrote it in, as the live stream does."""

from __future__ import annotations

from typing import Any

from models.db import Database
from tests.routes.test_sessions_api import add_messages, auth, new_session, text

__all__ = ["auth"]  # the fixture, used by name


def test_stored_tool_input_keeps_the_calls_order(
    client: Any, auth: dict[str, str], db: Database
) -> None:
    sid = new_session(client, auth, "Order")
    given = {"start_date": "2025-01-01", "end_date": "2025-01-31", "category": "Groceries"}
    call = {"type": "tool_use", "id": "t1", "name": "get_transactions", "input": given}
    add_messages(db, sid, ("user", text("Groceries?")), ("assistant", [call]))
    shown = client.get(f"/api/sessions/{sid}", headers=auth).get_json()
    (stored,) = [b for m in shown["messages"] for b in m["content"] if b["type"] == "tool_use"]
    assert list(stored["input"]) == ["start_date", "end_date", "category"]

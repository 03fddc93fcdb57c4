"""Usage stored per message (cache fields too) and totals with cost on GET turn and session."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

PRICES = {"offline demo model": {"input": 3, "output": 15}}


@pytest.fixture
def app_config(app_config: dict[str, Any]) -> dict[str, Any]:
    return {**app_config, "MODEL_PRICES": PRICES}


def _headers(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _turn(client: Any, app: Any, token: str, session_id: str, question: str) -> str:
    response = client.post(
        f"/api/sessions/{session_id}/turns", json={"message": question}, headers=_headers(token)
    )
    assert response.status_code == 202, response.json
    turn_id = response.json["turn_id"]
    assert app.extensions["turns"].wait(turn_id, timeout=30)
    return turn_id


def _total(messages: list[dict[str, Any]], key: str) -> int:
    return sum((m["usage"] or {}).get(key, 0) for m in messages)


def test_turn_and_session_report_their_token_totals_and_cost(
    client: Any, app: Any, user: tuple[int, str]
) -> None:
    token = user[1]
    session_id = client.post("/api/sessions", headers=_headers(token)).json["id"]
    first = _turn(client, app, token, session_id, "What did I spend on groceries last month?")
    second = _turn(client, app, token, session_id, "Which subscriptions am I paying for?")
    session = client.get(f"/api/sessions/{session_id}", headers=_headers(token)).json
    messages = session["messages"]
    assert all(m["usage"] is None for m in messages if m["role"] == "user")
    for turn_id in (first, second):
        turn = client.get(f"/api/turns/{turn_id}", headers=_headers(token)).json
        assert turn["status"] == "completed" and turn["events_url"]
        own = [m for m in messages if m["turn_id"] == turn_id]
        for key in ("input_tokens", "output_tokens", "cache_read_input_tokens"):
            assert turn["usage"][key] == _total(own, key)
        assert turn["usage"]["input_tokens"] > 0
        assert turn["usage"]["model_calls"] == sum(1 for m in own if m["usage"])
    totals = session["usage"]
    assert totals["input_tokens"] == _total(messages, "input_tokens")
    assert totals["output_tokens"] == _total(messages, "output_tokens")
    assert totals["total_tokens"] == sum(
        _total(messages, k)
        for k in (
            "input_tokens",
            "output_tokens",
            "cache_creation_input_tokens",
            "cache_read_input_tokens",
        )
    )
    dollars = (totals["input_tokens"] * 3 + totals["output_tokens"] * 15) / Decimal(10**6)
    assert session["cost"] == {
        "currency": "USD",
        "amount": str(dollars.quantize(Decimal("0.000001"))),
        "unpriced_models": [],
    }

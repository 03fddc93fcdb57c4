"""The demo model acts like a real one: deterministic, several rounds, reads only tool results."""

from __future__ import annotations

import json
from datetime import date
from typing import Any

from demo_data import seed_finance
from demo_model.brain import LABEL, progress_note, respond
from models.db import Database
from services.sessions import create_session
from streaming.wire.protocol import decode_stream
from tests.conftest import make_user
from tests.demo_model.conftest import Seeded, Tools, money
from tests.helpers import text_of
from tools.finance.clock import today as clock_today

SIGNATURE = "Answered by the"  # answers are not signed: the page labels the demo once


def test_the_same_conversation_gets_the_same_replies(year: Seeded) -> None:
    questions = ["How much did I spend on travel this year?", "and last year?", "Hello"]
    first, second = year.demo(), year.demo()
    for question in questions:
        a, b = first.ask(question), second.ask(question)
        assert a.replies == b.replies
        assert SIGNATURE not in a.text
    assert respond(first.body()) == respond(first.body())


def test_rounds_thinking_and_parallel_calls_keep_the_wire_shape(small_ledger: Seeded) -> None:
    turn = small_ledger.demo().ask("Restaurants this month vs last?")
    kinds = [[b["type"] for b in reply] for reply in turn.replies]
    assert kinds[:2] == [
        ["thinking", "thinking", "tool_use"],
        ["thinking", "tool_use", "tool_use"],
    ], "up-front thinking, then a progress note before each round of calls"
    assert set(kinds[2]) == {"text"} and turn.cited(), "the answer's figures cite their rows"
    thinking, note = turn.replies[0][:2]
    assert "Restaurants this month vs last?" in thinking["thinking"]
    assert note["thinking"].startswith("Looking up ")
    assert turn.replies[1][0]["thinking"].startswith("Read 1 result; now looking up ")
    assert all(b["signature"].startswith("pt1.") for b in (thinking, note))
    ids = [b["id"] for reply in turn.replies for b in reply if b["type"] == "tool_use"]
    assert len(ids) == len(set(ids)) == 3


def test_a_follow_up_says_what_it_reuses_in_its_thinking(year: Seeded) -> None:
    demo = year.demo()
    demo.ask("What did I spend on groceries last month?")
    thinking = demo.ask("And the month before?").replies[0][0]["thinking"]
    assert "groceries spending in July 2025 (2025-07-01 to 2025-07-31)" in thinking
    assert "reuse the earlier question's kind; subject; period, one step back" in thinking


def test_travel_takes_three_rounds_of_tools(year: Seeded) -> None:
    turn = year.demo().ask("How much did I spend on travel this year?")
    # Thinking and the summary; the category's rows; its refunds and its money out, in parallel
    # (each round with its progress note first).
    calls = [[b for b in r if b["type"] != "thinking"] for r in turn.replies[:-1]]
    assert [len(r) for r in calls] == [1, 1, 2]
    assert [sum(b["type"] == "thinking" for b in r) for r in turn.replies[:-1]] == [2, 1, 1]
    assert [args.get("flow") for _, args, _ in turn.calls] == [
        None,
        "net_spending",
        "refund",
        "spending",
    ]


def _first_round(question: str, today: date) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    body = {
        "model": LABEL,
        "stream": True,
        "tools": [{"name": "get_spending_summary"}, {"name": "get_transactions"}],
        "messages": [{"role": "user", "content": question}],
    }
    reply = respond(body, today=today)
    body["messages"].append({"role": "assistant", "content": reply.blocks})
    return [b for b in reply.blocks if b["type"] == "tool_use"], body


def test_answers_come_from_the_tool_results_in_the_request_not_the_database() -> None:
    day = date(2030, 6, 10)  # no database at all: the figures below are made up
    (call,), body = _first_round("What did I spend on dining last month?", day)
    summary = {
        "currencies": [
            {
                "currency": "CHF",
                "total_spent": "900.00",
                "count": 9,
                "groups": [
                    {"key": "Eating Out", "spent": "123.45", "count": 3, "share_pct": "13.7"}
                ],
            }
        ]
    }
    result = {"type": "tool_result", "tool_use_id": call["id"], "content": json.dumps(summary)}
    body["messages"].append({"role": "user", "content": [result]})
    reply = respond(body, today=day)
    note, listing = reply.blocks
    assert note == {**note, "type": "thinking", "thinking": ""}, "omitted without a display"
    assert listing["input"]["category"] == "Eating Out"
    assert listing["input"]["start_date"] == "2030-05-01"
    total = {"currency": "CHF", "net": "-123.45", "money_out": "-123.45", "money_in": "0.00"}
    rows = {"totals": [{**total, "count": 3}], "transactions": []}
    body["messages"] += [
        {"role": "assistant", "content": reply.blocks},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": listing["id"], "content": json.dumps(rows)}
            ],
        },
    ]
    (answer,) = respond(body, today=day).blocks
    assert answer["text"].startswith("**Eating Out** in May 2030 (2030-05-01 to 2030-05-31):")
    assert (
        "- CHF: **123.45 CHF**, across 3 transactions (13.7% of your 900.00 CHF" in answer["text"]
    )


def test_a_tool_error_is_reported_not_papered_over() -> None:
    (call,), body = _first_round("How much did I spend on rent this year?", date(2030, 6, 10))
    body["messages"].append(
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": call["id"],
                    "content": "The tool 'get_spending_summary' failed: OperationalError.",
                    "is_error": True,
                }
            ],
        }
    )
    (answer,) = respond(body, today=date(2030, 6, 10)).blocks
    assert answer["text"].startswith("I could not get all of the data I needed:")
    assert "OperationalError" in answer["text"]


def test_without_the_tools_it_says_it_cannot_look() -> None:
    body = {"messages": [{"role": "user", "content": "What are my balances?"}], "tools": []}
    (answer,) = respond(body, today=date(2030, 6, 10)).blocks
    assert "can't look at your data" in answer["text"]


def test_the_date_comes_from_the_system_prompt_like_a_real_model() -> None:
    body = {
        "system": "You are a finance assistant. Today is 2031-02-14.",
        "tools": [{"name": "get_spending_summary"}],
        "messages": [{"role": "user", "content": "groceries last month?"}],
    }
    (call,) = [b for b in respond(body).blocks if b["type"] == "tool_use"]
    assert (call["input"]["start_date"], call["input"]["end_date"]) == ("2031-01-01", "2031-01-31")


def _month_before(day: date, back: int) -> tuple[str, str]:
    index = day.year * 12 + day.month - 1 - back
    first = date(index // 12, index % 12 + 1, 1)
    nxt = date((index + 1) // 12, (index + 1) % 12 + 1, 1)
    return first.isoformat(), date.fromordinal(nxt.toordinal() - 1).isoformat()


def test_a_follow_up_through_the_engine_reuses_the_stored_history(app: Any, db: Database) -> None:
    user_id = make_user(db, "demo")[0]
    seed_finance(db, user_id)
    today = clock_today()
    turns = app.extensions["turns"]
    sid = create_session(db, user_id)["id"]
    texts = []
    for question in ("What did I spend on groceries last month?", "And the month before?"):
        turn = turns.start(user_id, sid, question)
        assert turns.wait(turn.turn_id, timeout=60)
        events = decode_stream(turns.peek(turn.turn_id, 0).frames)
        assert events[-1][2]["status"] == "completed"
        texts.append(text_of(events))
    tools = Tools(db, user_id, today)
    for text, back in zip(texts, (1, 2), strict=True):
        start, end = _month_before(today, back)
        summary = tools("get_spending_summary", start_date=start, end_date=end)
        (usd,) = summary["currencies"]
        groceries = next(g for g in usd["groups"] if g["key"] == "Groceries")
        assert "**Groceries** in " in text and f"({start} to {end})" in text
        assert f"- USD: **{money(groceries['spent'], 'USD')}**" in text
        assert SIGNATURE not in text


def test_a_progress_note_asks_for_a_change_and_looks_up_the_rest() -> None:
    assert progress_note(["get_transactions", "get_cash_flow"], 0) == (
        "Looking up transactions, cash flow."
    )
    assert progress_note(["set_budget"], 2) == "Read 2 results; now asking to set budget."
    assert progress_note(["get_budget_status", "chart"], 1) == (
        "Read 1 result; now looking up budget status and drawing a chart."
    )
    assert progress_note(["categorize_transactions"], 0) == "Asking to categorize transactions."

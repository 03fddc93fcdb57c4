"""A scripted ten-turn finance conversation: each turn's tool rounds, then its answer."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from demo_model.brain import Reply, display_of

Call = tuple[str, dict[str, Any]]
EXPENSES = (
    "Rent",
    "Groceries",
    "Restaurants",
    "Transport",
    "Utilities",
    "Subscriptions",
    "Fitness",
    "Shopping",
    "Travel",
)
CLOSING = (
    " I can break any of these figures down further by merchant, week or account, or compare"
    " them with an earlier period, if that would help."
)


@dataclass(frozen=True)
class Turn:
    """A user question, the tool rounds the model makes for it and its final answer."""

    question: str
    rounds: tuple[tuple[Call, ...], ...]
    answer: str


def conversation(today: date) -> list[Turn]:
    """Return the ten turns, their tool inputs dated relative to `today`."""
    this = today.replace(day=1)
    last_end = this - timedelta(days=1)
    last = last_end.replace(day=1)
    quarter = (last - timedelta(days=40)).replace(day=1)
    d = date.isoformat
    last_month = {"start_date": d(last), "end_date": d(last_end)}
    return [
        Turn(
            "What did I spend on groceries last month?",
            (
                (("get_spending_summary", {**last_month, "group_by": "category", "top_n": 8}),),
                (("get_transactions", {**last_month, "category": "Groceries", "limit": 8}),),
            ),
            "Last month you spent most on groceries at Whole Foods Market and Trader Joe's.",
        ),
        Turn(
            "Am I over budget anywhere this month?",
            ((("get_budget_status", {}),),),
            "You are within budget in every category so far this month except Restaurants.",
        ),
        Turn(
            "How much money do I have across my accounts?",
            ((("get_account_balances", {}),),),
            "Your checking and savings hold most of it; the cards carry this month's charges.",
        ),
        Turn(
            "Is my eating out going up? Compare this month with last month.",
            (
                (
                    (
                        "compare_spending",
                        {
                            "period_a_start": d(last),
                            "period_a_end": d(last_end),
                            "period_b_start": d(this),
                            "period_b_end": d(today),
                        },
                    ),
                ),
                (("get_transactions", {"category": "Restaurants", "start_date": d(this)}),),
            ),
            "Restaurant spending this month is running slightly above last month's pace.",
        ),
        Turn(
            "Which subscriptions am I paying for?",
            ((("find_recurring_payments", {"lookback_months": 6}),),),
            "You pay Netflix, Spotify, iCloud+ and FitLife Gym every month.",
        ),
        Turn(
            "Where did most of my money go over the last three months?",
            (
                (
                    (
                        "get_spending_summary",
                        {"start_date": d(quarter), "end_date": d(last_end), "group_by": "merchant"},
                    ),
                    (
                        "get_spending_summary",
                        {"start_date": d(quarter), "end_date": d(last_end), "group_by": "month"},
                    ),
                ),
            ),
            "Rent is by far the largest item, then groceries and restaurants.",
        ),
        Turn(
            "Show me my biggest purchases last month.",
            (
                (
                    (
                        "get_transactions",
                        {**last_month, "direction": "out", "sort": "amount_desc", "limit": 10},
                    ),
                ),
            ),
            "Your largest purchase last month was the rent, followed by a few larger shops.",
        ),
        Turn(
            "Break last month down for every spending category, against my budgets.",
            # One wide round: its 23 blocks are more than the API's 20-block lookback.
            (
                (
                    *(
                        ("get_spending_summary", {**last_month, "category": name})
                        for name in EXPENSES
                    ),
                    ("get_budget_status", {"month": last.strftime("%Y-%m")}),
                    ("get_account_balances", {}),
                ),
            ),
            "Rent and groceries lead last month; restaurants went a little over budget.",
        ),
        Turn(
            "How much have I spent at Amazon recently?",
            ((("get_transactions", {"merchant": "amazon", "limit": 6}),),),
            "Your recent Amazon orders are listed above, each well under two hundred dollars.",
        ),
        Turn(
            "Sum up my finances in three sentences.",
            ((("get_account_balances", {}), ("get_budget_status", {})),),
            "Your balances are healthy, spending is steady, and only restaurants need watching.",
        ),
    ]


def reply_for(body: dict[str, Any], turns: list[Turn]) -> Reply:
    """Return the scripted reply to a request: the turn's next tool round, else its answer."""
    messages = body.get("messages") or []
    questions = [i for i, m in enumerate(messages) if m.get("role") == "user" and asks(m)]
    number = len(questions) - 1
    turn = turns[number % len(turns)]
    return next_reply(messages, questions[-1], turn, f"sim_{number:02d}", body)


def next_reply(
    messages: list[dict[str, Any]],
    asked: int,
    turn: Turn,
    tag: str,
    body: dict[str, Any] | None = None,
) -> Reply:
    """The reply after question `asked`: the turn's next tool round, else its answer."""
    done = sum(1 for m in messages[asked:] if m.get("role") == "assistant")
    if done < len(turn.rounds):
        # As a model of today writes it: the note before its tool calls in a thinking block
        # (signed by the upstream), its text there unless the request's display omits it.
        note = "Let me check your data." if display_of(body or {}) != "omitted" else ""
        blocks: list[dict[str, Any]] = [{"type": "thinking", "thinking": note, "signature": ""}]
        blocks += [
            {"type": "tool_use", "id": f"toolu_{tag}_{done}_{k}", "name": n, "input": i}
            for k, (n, i) in enumerate(turn.rounds[done])
        ]
        return Reply(blocks, "tool_use")
    return Reply([{"type": "text", "text": turn.answer + CLOSING}], "end_turn")


def asks(message: dict[str, Any]) -> bool:
    """A question is a user message with no tool results."""
    content = message.get("content")
    if isinstance(content, str):
        return bool(content.strip())
    return not any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content or [])

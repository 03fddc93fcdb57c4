"""Decide the demo model's next message from a Messages API request body."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import date
from typing import Any

from demo_model.answers import compose_answer
from demo_model.plans import Results, make_plan

LABEL = "offline demo model"


@dataclass(frozen=True)
class Reply:
    """The blocks and stop reason of one assistant message."""

    blocks: list[dict[str, Any]]
    stop_reason: str


def respond(body: dict[str, Any], today: date | None = None) -> Reply:
    """Return the next assistant message for this request: tool calls or the answer."""
    today = today or date.today()
    messages = body.get("messages") or []
    offered = {t.get("name") for t in body.get("tools") or []}
    start = _question_index(messages)
    if start is None:
        return Reply([_text("Ask me about your accounts, spending or budgets.")], "end_turn")
    question = _text_of(messages[start])
    plan = make_plan(question, today)
    results = _results_since(messages, start)
    rounds_done = sum(1 for m in messages[start:] if m.get("role") == "assistant")
    digest = hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest()[:16]
    if rounds_done < len(plan.steps):
        calls = [(n, i) for n, i in plan.steps[rounds_done](results) if n in offered]
        if calls:
            blocks: list[dict[str, Any]] = []
            if rounds_done == 0:
                blocks.append(_thinking(question, [n for n, _ in calls], digest))
            blocks += [
                {"type": "tool_use", "id": f"toolu_demo_{digest}_{k}", "name": name, "input": args}
                for k, (name, args) in enumerate(calls)
            ]
            return Reply(blocks, "tool_use")
    answer = compose_answer(plan, results)
    return Reply([_text(f"{answer}\n\n_(Answered by the {LABEL}.)_")], "end_turn")


def _question_index(messages: list[dict[str, Any]]) -> int | None:
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "user" and _text_of(messages[i]).strip():
            return i
    return None


def _text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return " ".join(b.get("text", "") for b in content or [] if b.get("type") == "text")


def _results_since(messages: list[dict[str, Any]], start: int) -> Results:
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    out: Results = []
    for message in messages[start:]:
        for block in message.get("content") if isinstance(message.get("content"), list) else []:
            if block.get("type") == "tool_use":
                calls[block["id"]] = (block["name"], block.get("input") or {})
            elif block.get("type") == "tool_result" and block.get("tool_use_id") in calls:
                name, args = calls[block["tool_use_id"]]
                out.append((name, args, _parse_result(block)))
    return out


def _parse_result(block: dict[str, Any]) -> Any:
    content = block.get("content")
    text = (
        content
        if isinstance(content, str)
        else "".join(c.get("text", "") for c in content or [] if c.get("type") == "text")
    )
    if block.get("is_error"):
        return {"error": text}
    try:
        return json.loads(text)
    except ValueError:
        return {"text": text}


def _thinking(question: str, tools: list[str], digest: str) -> dict[str, Any]:
    thought = (
        f'The user asks: "{question.strip()[:200]}". I need their real data, so I '
        f"will call {', '.join(tools)} and answer from the exact figures it returns."
    )
    return {"type": "thinking", "thinking": thought, "signature": f"demo-signature-{digest}"}


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}

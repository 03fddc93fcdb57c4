"""Read a Messages API request: the user's questions, today's date and the tool results so far."""

from __future__ import annotations

import json
import re
from datetime import date
from typing import Any

from demo_model.tool_calls import Results

TODAY = re.compile(r"\bToday is (\d{4}-\d{2}-\d{2})\b")
# How a note reads when sent as user text (engine/upstream/conversation.py `AS_TEXT`).
NOTE = "[System note] "


def text_of(message: dict[str, Any]) -> str:
    """Return the text blocks of a message joined, or its string content."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    return " ".join(
        b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"
    )


def question_indexes(messages: list[dict[str, Any]]) -> list[int]:
    """Return the positions of the user's own questions (not tool results), oldest first.

    A note sent as user text (a model without system messages) is not a question.
    """
    return [
        i for i, m in enumerate(messages) if m.get("role") == "user" and _own_text(m).strip() != ""
    ]


def _own_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return " ".join(
        b.get("text", "")
        for b in content or []
        if isinstance(b, dict)
        and b.get("type") == "text"
        and not str(b.get("text", "")).startswith(NOTE)
    )


def today_of(body: dict[str, Any]) -> date | None:
    """Return the date the conversation gives as today, as a real model would read it: the
    newest one its system messages (or notes) tell, else the system prompt's."""
    texts = [
        text_of(m)
        for m in body.get("messages") or []
        if isinstance(m, dict) and m.get("role") in ("system", "user")
    ]
    system = body.get("system")
    texts.insert(0, system if isinstance(system, str) else text_of({"content": system}))
    for text in reversed(texts):
        for found in reversed(list(TODAY.finditer(text or ""))):
            try:
                return date.fromisoformat(found.group(1))
            except ValueError:
                continue
    return None


def results_since(messages: list[dict[str, Any]], start: int) -> Results:
    """Return (tool name, input, parsed result) for each tool call answered after `start`."""
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    out: Results = []
    for message in messages[start:]:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use":
                calls[block.get("id", "")] = (block.get("name", ""), block.get("input") or {})
            elif block.get("type") == "tool_result" and block.get("tool_use_id") in calls:
                name, args = calls[block["tool_use_id"]]
                out.append((name, args, _parse_result(block)))
    return out


def rounds_since(messages: list[dict[str, Any]], start: int) -> int:
    """Return how many assistant messages answer the question at `start` so far."""
    return sum(1 for m in messages[start:] if m.get("role") == "assistant")


def _parse_result(block: dict[str, Any]) -> Any:
    content = block.get("content")
    text = (
        content
        if isinstance(content, str)
        else "".join(
            c.get("text", "")
            for c in content or []
            if isinstance(c, dict) and c.get("type") == "text"
        )
    )
    if block.get("is_error"):
        return {"error": text}
    try:
        return json.loads(text)
    except ValueError:
        return {"error": f"the result was not JSON: {text[:200]}"}

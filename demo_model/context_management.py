"""The demo model's context management: compaction and tool-result clearing, as the API does.

A request's `context_management` is read like the API's: over a `compact_20260112` trigger
the reply starts with a compaction block (a short deterministic summary and an opaque
`encrypted_content`) and is billed as two iterations; over a `clear_tool_uses_20250919`
trigger the oldest tool results beyond `keep` are cleared before the model reads them. A
request that carries a compaction block is read as starting at it.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

Message = dict[str, Any]

CLEARED = "[tool result cleared to save context]"
SUMMARY = (
    "Summary of {count} earlier messages. Rounds answered: {rounds}. Last question: {question}"
)
READ_SUMMARY = re.compile(r"Rounds answered: (\d+)\. Last question: (.*)\Z", re.S)


@dataclass
class Managed:
    """What the model reads of a request, and what managing its context produced."""

    messages: list[Message]
    input_tokens: int
    compaction: dict[str, Any] | None = None
    applied_edits: list[dict[str, Any]] = field(default_factory=list)
    iterations: list[dict[str, Any]] = field(default_factory=list)


def tokens_of(value: Any) -> int:
    """The demo model's token count: a quarter of the JSON bytes."""
    return max(1, len(json.dumps(value, separators=(",", ":")).encode()) // 4)


def _edits(body: dict[str, Any], kind: str) -> dict[str, Any] | None:
    management = body.get("context_management")
    edits = management.get("edits") if isinstance(management, dict) else None
    for edit in edits if isinstance(edits, list) else []:
        if isinstance(edit, dict) and edit.get("type") == kind:
            return edit
    return None


def _value(edit: dict[str, Any], key: str, default: int) -> int:
    item = edit.get(key)
    value = item.get("value") if isinstance(item, dict) else None
    return value if isinstance(value, int) else default


def manage(body: dict[str, Any]) -> Managed:
    """Apply the request's context management to its messages."""
    messages = list(body.get("messages") or [])
    tokens = tokens_of(body.get("messages")) + tokens_of(body.get("system") or "")
    tokens += tokens_of(body.get("tools") or [])
    out = Managed(read_compacted(messages), tokens)
    compact = _edits(body, "compact_20260112")
    if compact is not None and tokens > _value(compact, "trigger", 150_000):
        text = summary(out.messages)
        digest = hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest()
        out.compaction = {
            "type": "compaction",
            "content": text,
            "encrypted_content": f"demo-compaction:{digest[:48]}",
        }
        compacted = tokens_of(out.compaction) + tokens_of(body.get("tools") or [])
        out.iterations = [
            _iteration("compaction", tokens, tokens_of(text)),
            _iteration("message", compacted, 0),
        ]
        out.input_tokens = compacted
    editing = _edits(body, "clear_tool_uses_20250919")
    if editing is not None and tokens > _value(editing, "trigger", 100_000):
        out.messages, edit = clear(
            out.messages, _value(editing, "keep", 3), _value(editing, "clear_at_least", 0)
        )
        if edit is not None:
            out.applied_edits.append(edit)
            out.input_tokens -= edit["cleared_input_tokens"]
    return out


def _iteration(kind: str, input_tokens: int, output_tokens: int) -> dict[str, Any]:
    return {
        "type": kind,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


def _text(message: Message) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return " ".join(
        b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"
    )


def _asks(message: Message) -> bool:
    content = message.get("content")
    if message.get("role") != "user":
        return False
    if isinstance(content, str):
        return bool(content.strip())
    return not any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content or [])


def summary(messages: list[Message]) -> str:
    """A deterministic summary: how many messages, the last question and its rounds so far."""
    asked = [i for i, m in enumerate(messages) if _asks(m)]
    last = asked[-1] if asked else 0
    rounds = sum(1 for m in messages[last:] if m.get("role") == "assistant")
    question = _text(messages[last]).strip() if messages else ""
    if len(question) > 300:
        # Short whatever was asked: its start says what, its end may number it.
        question = f"{question[:200]} ... {question[-60:]}"
    return SUMMARY.format(count=len(messages), rounds=rounds, question=question)


def read_compacted(messages: list[Message]) -> list[Message]:
    """Messages as the model reads them: from the newest compaction block, its summary
    standing for the question it was asked and the rounds answered before it."""
    start = None
    for i in range(len(messages) - 1, -1, -1):
        content = messages[i].get("content")
        if messages[i].get("role") == "assistant" and isinstance(content, list):
            hits = [j for j, b in enumerate(content) if _compaction_text(b) is not None]
            if hits:
                start = (i, hits[-1])
                break
    if start is None:
        return messages
    i, j = start
    block = messages[i]["content"][j]
    found = READ_SUMMARY.search(_compaction_text(block) or "")
    rounds, question = (int(found.group(1)), found.group(2)) if found else (0, "")
    head: list[Message] = [{"role": "user", "content": [{"type": "text", "text": question}]}]
    head += [{"role": "assistant", "content": []} for _ in range(rounds)]
    rest = list(messages[i]["content"][j + 1 :])
    return [*head, {"role": "assistant", "content": rest}, *messages[i + 1 :]]


def _compaction_text(block: Any) -> str | None:
    if isinstance(block, dict) and block.get("type") == "compaction":
        content = block.get("content")
        return content if isinstance(content, str) else None
    return None


def clear(
    messages: list[Message], keep: int, clear_at_least: int
) -> tuple[list[Message], dict[str, Any] | None]:
    """Clear the oldest tool results beyond the newest `keep` tool uses."""
    ids = [
        b.get("id")
        for m in messages
        if m.get("role") == "assistant" and isinstance(m.get("content"), list)
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "tool_use"
    ]
    old = set(ids[: max(0, len(ids) - keep)])
    out, cleared, freed = [], 0, 0
    for message in messages:
        content = message.get("content")
        if message.get("role") != "user" or not isinstance(content, list):
            out.append(message)
            continue
        blocks = []
        for b in content:
            if (
                isinstance(b, dict)
                and b.get("type") == "tool_result"
                and b.get("tool_use_id") in old
                and b.get("content") != CLEARED
            ):
                freed += tokens_of(b) - tokens_of({**b, "content": CLEARED})
                cleared += 1
                b = {**b, "content": CLEARED}
            blocks.append(b)
        out.append({**message, "content": blocks})
    if not cleared or freed < clear_at_least:
        return messages, None
    edit = {
        "type": "clear_tool_uses_20250919",
        "cleared_tool_uses": cleared,
        "cleared_input_tokens": freed,
    }
    return out, edit

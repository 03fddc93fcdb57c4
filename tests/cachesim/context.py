"""Context management on the simulated API: compaction and tool-result clearing (pure).

Applied before the caching rules, as the API does: over a `compact_20260112` trigger the
request is billed as a compaction iteration (the whole request) and a message iteration (tools,
system and the new compaction block), and its reply starts with that block; a request that
starts at a compaction block is read from it. Over a `clear_tool_uses_20250919` trigger the
oldest tool results beyond `keep` are replaced by a placeholder, which changes every prefix
from the first of them.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from demo_model.context_management import clear, read_compacted, summary
from tests.cachesim.rules import Usage, points


@dataclass
class Managed:
    """How one request is served: the prompts billed, in order, and what the reply carries."""

    prompts: list[dict[str, Any]]
    # The request as the scripted model reads it (from its newest compaction).
    reads: dict[str, Any]
    compaction: dict[str, Any] | None = None
    applied_edits: list[dict[str, Any]] = field(default_factory=list)


def _edit(body: dict[str, Any], kind: str) -> dict[str, Any] | None:
    management = body.get("context_management") or {}
    for edit in management.get("edits") or []:
        if edit.get("type") == kind:
            return edit
    return None


def _value(edit: dict[str, Any], key: str) -> int:
    return int((edit.get(key) or {}).get("value", 0))


def manage(body: dict[str, Any]) -> Managed:
    """Apply the request's context management; return what is billed and read."""
    prompt = points(body)
    tokens = prompt[-1].tokens if prompt else 0
    messages = body.get("messages") or []
    out = Managed([body], {**body, "messages": read_compacted(messages)})
    compact = _edit(body, "compact_20260112")
    if compact is not None and tokens > _value(compact, "trigger"):
        digest = hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest()
        out.compaction = {
            "type": "compaction",
            "content": summary(out.reads["messages"]),
            "encrypted_content": f"sim-compaction:{digest[:48]}",
        }
        after = {k: v for k, v in body.items() if k != "messages"}
        after["messages"] = [{"role": "assistant", "content": [out.compaction]}]
        out.prompts.append(after)
    edit = _edit(body, "clear_tool_uses_20250919")
    if edit is not None and tokens > _value(edit, "trigger"):
        cleared, applied = clear(messages, _value(edit, "keep"), _value(edit, "clear_at_least"))
        if applied is not None:
            out.prompts = [{**body, "messages": cleared}]
            out.applied_edits.append(applied)
    return out


def combined(usages: list[Usage]) -> Usage:
    """The usage of every iteration of one request, added up."""
    return Usage(
        input_tokens=sum(u.input_tokens for u in usages),
        cache_read_input_tokens=sum(u.cache_read_input_tokens for u in usages),
        write_5m=sum(u.write_5m for u in usages),
        write_1h=sum(u.write_1h for u in usages),
    )

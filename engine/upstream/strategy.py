"""How a long conversation is kept within the window: trim, compact or edit (pure).

- `trim`: the engine leaves old turns out (engine/upstream/selection.py); nothing is sent for it.
- `compact`: the API's server-side compaction. Over its trigger the reply starts with a
  `compaction` block summarising everything before it; from then on the model's view starts
  at that block: later requests send it (verbatim) and what follows it.
- `edit`: the API's context editing clears old tool results over its trigger.

Trim stays the backstop for both: a request never exceeds the window even if the server
does not act. Every number here derives from the window in one place (`strategy_for`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "COMPACT_BETA",
    "COMPACT_MIN_TRIGGER",
    "EDIT_BETA",
    "OPENER",
    "STRATEGIES",
    "Strategy",
    "StrategyKind",
    "compaction_start",
    "model_view",
    "strategy_for",
]

Message = dict[str, Any]
StrategyKind = Literal["trim", "compact", "edit"]
STRATEGIES: tuple[StrategyKind, ...] = ("trim", "compact", "edit")

COMPACT_BETA = "compact-2026-01-12"
EDIT_BETA = "context-management-2025-06-27"
COMPACT_EDIT = "compact_20260112"
CLEAR_EDIT = "clear_tool_uses_20250919"
# The API refuses a compaction trigger below this many input tokens.
COMPACT_MIN_TRIGGER = 50_000
# What a compacted view opens with (see model_view); it is not stored.
OPENER: Message = {"role": "user", "content": "(The conversation so far is summarised next.)"}
# Triggers as a share of the room (window less the output budget). Our estimate errs high
# (about 4/3 of the API's count), so trim acts at about 3/4 of the room in the API's tokens:
# both triggers stay below that, so the server acts first and trim is only the backstop.
COMPACT_SHARE = 0.6
EDIT_SHARE = 0.5
# Context editing keeps the newest tool uses, and clears at least this share of its trigger
# each time it acts: every clearing rewrites the cache from the first cleared result, so it
# should happen in big steps, rarely.
EDIT_KEEP = 4
EDIT_CLEAR_SHARE = 0.3


@dataclass(frozen=True)
class Strategy:
    """The chosen strategy and the numbers it sends."""

    kind: StrategyKind = "trim"
    trigger: int = 0
    keep: int = EDIT_KEEP
    clear_at_least: int = 0

    @property
    def beta(self) -> str | None:
        """The beta header the strategy needs, if any."""
        return {"compact": COMPACT_BETA, "edit": EDIT_BETA}.get(self.kind)

    def context_management(self) -> dict[str, Any] | None:
        """The request's `context_management` field, or None for trim."""
        trigger = {"type": "input_tokens", "value": self.trigger}
        if self.kind == "compact":
            return {"edits": [{"type": COMPACT_EDIT, "trigger": trigger}]}
        if self.kind == "edit":
            edit = {
                "type": CLEAR_EDIT,
                "trigger": trigger,
                "keep": {"type": "tool_uses", "value": self.keep},
                "clear_at_least": {"type": "input_tokens", "value": self.clear_at_least},
            }
            return {"edits": [edit]}
        return None


def strategy_for(kind: str, context_tokens: int, max_tokens: int) -> Strategy:
    """Return the strategy `kind` for this window; raise ValueError with a clear message."""
    if kind not in STRATEGIES:
        raise ValueError(f"CONTEXT_STRATEGY must be one of {', '.join(STRATEGIES)}, got {kind!r}")
    room = context_tokens - max_tokens
    if kind == "trim":
        return Strategy()
    if kind == "compact":
        least = math.ceil(COMPACT_MIN_TRIGGER / COMPACT_SHARE)
        if room < least:
            raise ValueError(
                f"CONTEXT_STRATEGY=compact needs MODEL_CONTEXT_TOKENS - MAX_TOKENS of at least "
                f"{least:,} (got {room:,}): the API's least compaction trigger, "
                f"{COMPACT_MIN_TRIGGER:,} tokens, is {COMPACT_SHARE:.0%} of it"
            )
        return Strategy("compact", int(COMPACT_SHARE * room))
    trigger = int(EDIT_SHARE * room)
    if trigger < 1:
        raise ValueError(f"CONTEXT_STRATEGY=edit needs a window above MAX_TOKENS (got {room})")
    return Strategy("edit", trigger, EDIT_KEEP, max(1, int(EDIT_CLEAR_SHARE * trigger)))


def _is_compaction(block: Any) -> bool:
    # A compaction whose content is null failed: the server treats it as a no-op.
    return (
        isinstance(block, dict)
        and block.get("type") == "compaction"
        and isinstance(block.get("content"), str)
    )


def compaction_start(history: list[Message]) -> tuple[int, int] | None:
    """Return (message, block) of the newest compaction block in `history`, if any."""
    for i in range(len(history) - 1, -1, -1):
        message = history[i]
        content = message.get("content")
        if message.get("role") != "assistant" or not isinstance(content, list):
            continue
        for j in range(len(content) - 1, -1, -1):
            if _is_compaction(content[j]):
                return i, j
    return None


def model_view(history: list[Message], kind: StrategyKind) -> tuple[int, list[Message]]:
    """Return (offset, messages): what the model sees of `history` before any trimming.

    With compact, the view starts at the newest compaction block (earlier blocks of its
    message are dropped, as the API itself would); other strategies send no compaction block
    (a session whose strategy changed), and a message left empty by that keeps a short note.
    """
    if kind == "compact":
        found = compaction_start(history)
        if found is None:
            return 0, history
        i, j = found
        first = history[i]
        # The API reads nothing before the compaction block: not the notes sent before its
        # reply either (the block's `tool_changes` carry the tool changes of what it sums up).
        head = {k: v for k, v in first.items() if k != "preamble"}
        if j:
            head["content"] = first["content"][j:]
        # A request opens with a user message; the API drops everything before the compaction
        # block, so a constant opener costs nothing and keeps the cached prefix stable.
        return i - 1, [OPENER, head, *history[i + 1 :]]
    if not any(_has_compaction(m) for m in history):
        return 0, history
    return 0, [_without_compaction(m) for m in history]


def _has_compaction(message: Message) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "compaction" for b in content
    )


def _without_compaction(message: Message) -> Message:
    if not _has_compaction(message):
        return message
    kept = [
        b for b in message["content"] if not (isinstance(b, dict) and b.get("type") == "compaction")
    ]
    if not kept:
        kept = [{"type": "text", "text": "(Earlier messages were summarised.)"}]
    return {**message, "content": kept}

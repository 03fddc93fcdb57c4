"""Tool call ids: the ones a history holds, and a fresh one for a call that reuses one."""

from __future__ import annotations

from typing import Any

TOOL_CALLS = ("tool_use", "server_tool_use", "mcp_tool_use")


def tool_ids(history: list[dict[str, Any]]) -> set[str]:
    """Return every tool call id the history holds."""
    return {
        block["id"]
        for message in history
        if message["role"] == "assistant"
        for block in message["content"]
        if isinstance(block, dict) and "id" in block
    }


class UniqueIds:
    """Gives a tool call whose id was used before an id of its own, within one message.

    Some servers number ids per message (`toolu_0`, `toolu_1`, ...): a reused id is a new
    call, so it must never get another call's stored result, and the history sent back
    must hold unique ids. Result blocks in the same message follow the rename.
    """

    def __init__(self, history_ids: frozenset[str]) -> None:
        self.history_ids = history_ids
        self.reset()

    def reset(self) -> None:
        """Start a new message: only the history's ids are taken."""
        self.used: set[str] = set(self.history_ids)
        self.renamed: dict[str, str] = {}

    def fix(self, block: dict[str, Any]) -> tuple[dict[str, Any], str | None, str | None]:
        """Return the block to show, and (field, new value) if the stored one must change."""
        ident = block.get("id") if block.get("type") in TOOL_CALLS else None
        if isinstance(ident, str):
            fresh, n = ident, 1
            while fresh in self.used:
                n += 1
                fresh = f"{ident}_{n}"
            self.used.add(fresh)
            if fresh != ident:
                self.renamed[ident] = fresh
                return {**block, "id": fresh}, "id", fresh
        elif block.get("tool_use_id") in self.renamed:
            fresh = self.renamed[block["tool_use_id"]]
            return {**block, "tool_use_id": fresh}, "tool_use_id", fresh
        return block, None, None

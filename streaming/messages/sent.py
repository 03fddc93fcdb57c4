"""What of a stored history goes back to the model: all of it but the keys we keep (pure)."""

from __future__ import annotations

from typing import Any

__all__ = ["PRIVATE", "as_sent"]

# The keys a block of each type may carry that the API must not get back.
PRIVATE = {"text": "citations", "tool_use": "input_error", "tool_result": "declined"}


def as_sent(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return `history` without the keys we store for ourselves; the input is not changed.

    - `citations` on text blocks: the API numbers a citation's `search_result_index` over the
      search results of the one request it answered, and a later request may leave old tool
      results out (trimming, a context strategy), so an old citation can point at another
      result or past the end, and the request is refused.
    - `input_error` on tool_use blocks: why the input was unusable, kept for a takeover.
    - `declined` on tool_result blocks: how people see a declined call (the model reads
      the block's own text).

    Stored messages keep them. The same history always gives the same bytes, so cached
    prefixes hold.
    """
    out = []
    for message in history:
        content = message.get("content")
        if isinstance(content, list) and any(_private(block) for block in content):
            content = [_public(block) if _private(block) else block for block in content]
            message = {**message, "content": content}
        out.append(message)
    return out


def _private(block: object) -> bool:
    if not isinstance(block, dict):
        return False
    kind = block.get("type")
    return isinstance(kind, str) and PRIVATE.get(kind, "") in block


def _public(block: dict[str, Any]) -> dict[str, Any]:
    key = PRIVATE[block["type"]]
    return {k: v for k, v in block.items() if k != key}

"""A deterministic, conservative token estimate of a request's blocks (pure, no tokenizer).

A block costs ceil(bytes / 3) of its compact, ASCII-escaped JSON. Claude's tokenizer reads
about 3.5-4 bytes of English or JSON per token, so a third errs on the high side; JSON keys
and quotes count too, and every non-ASCII character counts as its 6-byte \\uXXXX escape (two
tokens), which keeps CJK text and emoji on the high side as well. Markers (`cache_control`)
are left out, so moving them never changes an estimate.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = [
    "BYTES_PER_TOKEN",
    "MESSAGE_TOKENS",
    "block_tokens",
    "blocks_of",
    "message_tokens",
    "request_tokens",
    "usage_input_tokens",
    "usage_tokens",
]

BYTES_PER_TOKEN = 3
# Each message's role and framing.
MESSAGE_TOKENS = 4
INPUT_FIELDS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def block_tokens(block: Any) -> int:
    """Return the estimated tokens of one block (tool, system or content block)."""
    if isinstance(block, dict) and "cache_control" in block:
        block = {k: v for k, v in block.items() if k != "cache_control"}
    size = len(json.dumps(block, separators=(",", ":"), ensure_ascii=True))
    return -(-size // BYTES_PER_TOKEN)


def blocks_of(content: Any) -> list[Any]:
    """Return message content as blocks (a string is one text block, as the API reads it)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content) if isinstance(content, list) else []


def message_tokens(message: dict[str, Any]) -> int:
    """Return the estimated tokens of one message."""
    return MESSAGE_TOKENS + sum(block_tokens(block) for block in blocks_of(message.get("content")))


def request_tokens(params: dict[str, Any]) -> int:
    """Return the estimated input tokens of a request's tools, system and messages."""
    system = params.get("system")
    system_blocks = blocks_of(system) if system else []
    fixed = sum(block_tokens(block) for block in [*(params.get("tools") or []), *system_blocks])
    return fixed + sum(message_tokens(m) for m in params.get("messages") or [])


def _counts(usage: Any, keys: tuple[str, ...]) -> int:
    if not isinstance(usage, dict):
        return 0
    values = (usage.get(key) for key in keys)
    return sum(v for v in values if isinstance(v, int) and not isinstance(v, bool) and v > 0)


def usage_input_tokens(usage: dict[str, Any] | None) -> int:
    """Return every input token a usage object reports: uncached, cache writes, cache reads."""
    return _counts(usage, INPUT_FIELDS)


def usage_tokens(usage: dict[str, Any] | None) -> int:
    """Return every token a usage object reports: all input tokens and the output."""
    return _counts(usage, (*INPUT_FIELDS, "output_tokens"))

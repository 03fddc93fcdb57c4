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
    "billed_usage",
    "block_tokens",
    "blocks_of",
    "message_tokens",
    "request_input_tokens",
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
    """Return every token a usage object reports, every iteration's: input and output."""
    return _counts(billed_usage(usage), (*INPUT_FIELDS, "output_tokens"))


def billed_usage(usage: dict[str, Any] | None) -> dict[str, Any] | None:
    """Return `usage` with its token fields summed over `iterations`, when it has them.

    A compacted reply reports a `compaction` iteration and `message` iterations; its
    top-level fields hold the message iterations only, but every iteration is billed.
    """
    if not isinstance(usage, dict):
        return usage
    iterations = usage.get("iterations")
    if not isinstance(iterations, list) or not iterations:
        return usage
    steps = [step for step in iterations if isinstance(step, dict)]
    out = dict(usage)
    for key in (*INPUT_FIELDS, "output_tokens"):
        out[key] = sum(_counts(step, (key,)) for step in steps)
    split: dict[str, int] = {}
    for step in steps:
        creation = step.get("cache_creation")
        for key, value in creation.items() if isinstance(creation, dict) else ():
            if isinstance(value, int) and not isinstance(value, bool):
                split[key] = split.get(key, 0) + value
    if split:
        out["cache_creation"] = split
    return out


def request_input_tokens(usage: dict[str, Any] | None) -> int:
    """Return the input tokens of the request as sent: its first iteration's, if it has any.

    The first iteration (a compaction, when one ran) read the whole request; later ones read
    the compacted context.
    """
    iterations = usage.get("iterations") if isinstance(usage, dict) else None
    if isinstance(iterations, list) and iterations and isinstance(iterations[0], dict):
        return _counts(iterations[0], INPUT_FIELDS)
    return _counts(usage, INPUT_FIELDS)

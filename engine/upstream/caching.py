"""Where a request's prompt-cache breakpoints go, so each model call reads the last one's prefix.

Pure: no I/O, and the stored history is never mutated: only the blocks that get a marker and
messages whose string content becomes a block list are copied (tools are rebuilt sorted).

The prompt is cached as a prefix in the order tools -> system -> messages. Three breakpoints:

1. the static system block (system[0]): tools and instructions, shared by every session and
   every day, because the date lives in a later system block;
2. the last block of the message the previous model call ended on (the one before the last
   reply: a user message, or the system notes sent after it): an exact hit on what that call
   wrote, however many blocks the newest round added (the API's lookback from a breakpoint
   only reaches about 20 blocks back);
3. the last block of the last message: writes the conversation so far for the next call.

The fourth goes on a compaction block that opens the messages (CONTEXT_STRATEGY=compact): the
summary a compaction started from is read from the cache by every call until the next one.
No block is ever added, so nothing inside an
already cached prefix can appear or disappear between calls; markers themselves are not part
of a prefix's identity, so moving them keeps every cached prefix readable.
"""

from __future__ import annotations

from typing import Any, Literal, cast

__all__ = [
    "EXTENDED_TTL_BETA",
    "MAX_BREAKPOINTS",
    "MODES",
    "CacheMode",
    "breakpoints",
    "canonical_tools",
    "marker",
    "place",
]

Block = dict[str, Any]
Message = dict[str, Any]
CacheMode = Literal["off", "5m", "1h"]

MODES: tuple[CacheMode, ...] = ("off", "5m", "1h")
MAX_BREAKPOINTS = 4
# Sent with 1h breakpoints: endpoints that predate the 1h TTL's general availability need it.
EXTENDED_TTL_BETA = "extended-cache-ttl-2025-04-11"
# The API refuses cache_control on these.
UNMARKABLE = frozenset({"thinking", "redacted_thinking"})


def marker(mode: CacheMode) -> dict[str, str]:
    """Return the `cache_control` value for `mode` ("5m" is the API's default TTL)."""
    if mode == "1h":
        return {"type": "ephemeral", "ttl": "1h"}
    return {"type": "ephemeral"}


# The last tools list canonical_tools saw, and its result.
_last_tools: tuple[list[Block], list[Block]] | None = None


def canonical_tools(tools: list[Block]) -> list[Block]:
    """Return the tools sorted by name with every object's keys sorted, so bytes never vary.

    The result for the last list seen is reused while the same list object comes again (a
    server sends one list on every request; sorting it took about 7% of a turn's CPU), so it
    is shared: never change it.
    """
    global _last_tools
    last = _last_tools
    if last is not None and last[0] is tools:
        return last[1]
    ordered = sorted(tools, key=lambda tool: tool["name"])
    # Both keep a value's kind: a tool (a dict) comes back a dict.
    result = [cast(Block, _sorted_keys(_unmarked(tool))) for tool in ordered]
    _last_tools = (tools, result)
    return result


def place(
    tools: list[Block], system: list[Block], messages: list[Message], mode: CacheMode
) -> tuple[list[Block], list[Block], list[Message]]:
    """Return (tools, system, messages) ready to send, with at most 3 breakpoints unless off."""
    if mode not in MODES:
        raise ValueError(f"prompt cache mode must be one of {', '.join(MODES)}, got {mode!r}")
    tools = canonical_tools(tools)
    messages = [_as_blocks(message) for message in messages]
    system = [_unmarked(block) for block in system]
    if mode == "off":
        return tools, system, messages
    mark = marker(mode)
    if system:
        system[0] = {**system[0], "cache_control": mark}
    # A compacted view opens with a constant user opener, then the compaction: the API drops
    # what precedes the compaction block, so no breakpoint goes there.
    start = next(
        (i for i in range(min(2, len(messages))) if _opens_with_compaction(messages[i])), 0
    )
    last = len(messages) - 1
    for index in (_previous_end(messages), last):
        if index is not None and index >= start:
            messages[index] = _mark_last(messages[index], mark)
    if messages and _opens_with_compaction(messages[start]):
        first = messages[start]
        blocks = [{**first["content"][0], "cache_control": mark}, *first["content"][1:]]
        messages[start] = {**first, "content": blocks}
    return tools, system, messages


def _opens_with_compaction(message: Message) -> bool:
    content = message.get("content")
    return (
        isinstance(content, list)
        and bool(content)
        and isinstance(content[0], dict)
        and content[0].get("type") == "compaction"
    )


def breakpoints(tools: list[Block], system: list[Block], messages: list[Message]) -> int:
    """Return how many blocks of a request carry `cache_control`."""
    blocks = [*tools, *system]
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            blocks.extend(content)
    return sum(1 for block in blocks if isinstance(block, dict) and "cache_control" in block)


def _previous_end(messages: list[Message]) -> int | None:
    """Index of the message before the last reply: where the previous call ended."""
    for index in range(len(messages) - 1, 0, -1):
        if messages[index].get("role") == "assistant":
            return index - 1
    return None


def _mark_last(message: Message, mark: dict[str, str]) -> Message:
    """Return `message` with a marker on its last block that may carry one."""
    content = message["content"]
    for index in range(len(content) - 1, -1, -1):
        block = content[index]
        if _markable(block):
            blocks = list(content)
            blocks[index] = {**block, "cache_control": mark}
            return {**message, "content": blocks}
    return message


def _markable(block: Any) -> bool:
    if not isinstance(block, dict) or block.get("type") in UNMARKABLE:
        return False
    # The API refuses a marker on an empty text block.
    return block.get("type") != "text" or bool(block.get("text"))


def _as_blocks(message: Message) -> Message:
    """String content as one text block (as the API reads it), without stray markers."""
    content = message.get("content")
    if isinstance(content, str):
        return {**message, "content": [{"type": "text", "text": content}]}
    if isinstance(content, list) and any(
        isinstance(block, dict) and "cache_control" in block for block in content
    ):
        return {**message, "content": [_unmarked(block) for block in content]}
    return message


def _unmarked(block: Any) -> Any:
    if isinstance(block, dict) and "cache_control" in block:
        return {k: v for k, v in block.items() if k != "cache_control"}
    return block


def _sorted_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _sorted_keys(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_sorted_keys(item) for item in value]
    return value

"""Encode an assistant reply as Anthropic Messages SSE bytes, split like a real stream."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any


def sse(event_type: str, data: dict[str, Any]) -> bytes:
    """Return one SSE event in the API's `event:` + `data:` form."""
    return f"event: {event_type}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


def split_text(text: str, rng: random.Random, low: int = 2, high: int = 12) -> list[str]:
    """Cut `text` into token-sized pieces at arbitrary points."""
    pieces, i = [], 0
    while i < len(text):
        n = rng.randint(low, high)
        pieces.append(text[i : i + n])
        i += n
    return pieces


def encode_reply(
    message_id: str,
    model: str,
    blocks: list[dict[str, Any]],
    stop_reason: str,
    input_tokens: int,
    rng: random.Random,
    usage: dict[str, Any] | None = None,
    context_management: dict[str, Any] | None = None,
    input_transformations: list[dict[str, Any]] | None = None,
) -> Iterator[bytes]:
    """Yield the SSE events of one assistant message made of `blocks`.

    `usage` adds to the final usage (e.g. `iterations`); `context_management` goes on the
    message_delta event, as the API reports the edits it applied; `input_transformations`
    (under the binding beta) is final in message_start, as the API sends it.
    """
    message: dict[str, Any] = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {
            "input_tokens": input_tokens,
            "output_tokens": 1,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
    }
    if input_transformations is not None:
        message["input_transformations"] = input_transformations
    yield sse("message_start", {"type": "message_start", "message": message})
    yield sse("ping", {"type": "ping"})
    out_chars = 0
    for index, block in enumerate(blocks):
        kind = block["type"]
        start: dict[str, Any]
        deltas: list[dict[str, Any]]
        if kind == "thinking":
            start = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [
                {"type": "thinking_delta", "thinking": p}
                for p in split_text(block["thinking"], rng)
            ]
            deltas.append({"type": "signature_delta", "signature": block["signature"]})
            out_chars += len(block["thinking"])
        elif kind == "compaction":
            # The API streams a compaction block whole, in one delta.
            start = {"type": "compaction", "content": None, "encrypted_content": None}
            deltas = [
                {
                    "type": "compaction_delta",
                    "content": block["content"],
                    "encrypted_content": block["encrypted_content"],
                }
            ]
        elif kind == "text":
            start = {"type": "text", "text": ""}
            # As the API streams a cited sentence: its citations first, then its text.
            deltas = [
                {"type": "citations_delta", "citation": c} for c in block.get("citations") or []
            ]
            deltas += [{"type": "text_delta", "text": p} for p in split_text(block["text"], rng)]
            out_chars += len(block["text"])
        elif kind == "tool_search_tool_result":
            # A server tool's result arrives whole in its start event, as the API sends it.
            start, deltas = block, []
        else:
            # tool_use, or server_tool_use (a tool search): the input streams as JSON.
            start = {"type": kind, "id": block["id"], "name": block["name"], "input": {}}
            raw = json.dumps(block["input"])
            deltas = [
                {"type": "input_json_delta", "partial_json": p}
                for p in ["", *split_text(raw, rng, 1, 15)]
            ]
            out_chars += len(raw)
        yield sse(
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": start},
        )
        for delta in deltas:
            yield sse(
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            )
        yield sse("content_block_stop", {"type": "content_block_stop", "index": index})
    message_delta: dict[str, Any] = {
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason, "stop_sequence": None},
        "usage": {"output_tokens": max(1, out_chars // 4), **(usage or {})},
    }
    if context_management is not None:
        message_delta["context_management"] = context_management
    yield sse("message_delta", message_delta)
    yield sse("message_stop", {"type": "message_stop"})

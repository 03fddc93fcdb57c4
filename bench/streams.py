"""Synthetic Anthropic SSE streams for benchmarks: a large tool input, many text deltas."""

from __future__ import annotations

import json
import random

from demo_model.wire import sse


def big_tool_input(target_bytes: int, seed: int = 7) -> dict[str, object]:
    """Return a realistic JSON object of about `target_bytes` once serialised."""
    rng = random.Random(seed)
    rows = []
    while len(json.dumps(rows)) < target_bytes:
        rows.append(
            {
                "date": f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
                "merchant": rng.choice(["Safeway", "Netflix", "Shell", "Uber"]),
                "amount": f"-{rng.randint(1, 50000) / 100:.2f}",
                "note": "x" * rng.randint(0, 40),
            }
        )
    return {"transactions": rows}


def tool_stream(payload: dict[str, object], deltas: int) -> bytes:
    """Encode one tool_use message whose input arrives in `deltas` fragments."""
    raw = json.dumps(payload)
    step = max(1, len(raw) // deltas)
    frags = [raw[i : i + step] for i in range(0, len(raw), step)]
    out = [
        sse(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "msg_bench",
                    "type": "message",
                    "role": "assistant",
                    "model": "bench",
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 1, "output_tokens": 1},
                },
            },
        ),
        sse(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {
                    "type": "tool_use",
                    "id": "toolu_bench",
                    "name": "record",
                    "input": {},
                },
            },
        ),
    ]
    out += [
        sse(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": f},
            },
        )
        for f in frags
    ]
    out += [
        sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                "usage": {"output_tokens": 10},
            },
        ),
        sse("message_stop", {"type": "message_stop"}),
    ]
    return b"".join(out)


def text_stream(deltas: int, seed: int = 3) -> bytes:
    """Encode one text message of `deltas` token-sized text deltas."""
    rng = random.Random(seed)
    words = ["You", " spent", " 339.14", " USD", " on", " groceries", " in", " October", "."]
    out = [
        sse(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "msg_bench",
                    "type": "message",
                    "role": "assistant",
                    "model": "bench",
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 1, "output_tokens": 1},
                },
            },
        ),
        sse(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
    ]
    out += [
        sse(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": rng.choice(words)},
            },
        )
        for _ in range(deltas)
    ]
    out += [
        sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": deltas},
            },
        ),
        sse("message_stop", {"type": "message_stop"}),
    ]
    return b"".join(out)


def chunked(raw: bytes, size: int = 1400) -> list[bytes]:
    """Split bytes like network reads of about one TCP segment."""
    return [raw[i : i + size] for i in range(0, len(raw), size)]

"""Synthetic Anthropic SSE streams for benchmarks, and the SDK client that reads them."""

from __future__ import annotations

import json
import random
from typing import Any

import anthropic
import httpx2

from demo_model.wire import sse


def big_tool_input(target_bytes: int, seed: int = 7) -> dict[str, object]:
    """Return a realistic JSON object of about `target_bytes` once serialised."""
    rng = random.Random(seed)
    rows: list[dict[str, str]] = []
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


def one_block_message(block: dict[str, Any], deltas: list[dict[str, Any]], stop: str) -> bytes:
    """Encode a message of one content block that streams `deltas`."""
    message: dict[str, Any] = {
        "id": "msg_bench",
        "type": "message",
        "role": "assistant",
        "model": "bench",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    out = [
        sse("message_start", {"type": "message_start", "message": message}),
        sse(
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": block},
        ),
    ]
    out += [
        sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": d})
        for d in deltas
    ]
    out += [
        sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": len(deltas)},
            },
        ),
        sse("message_stop", {"type": "message_stop"}),
    ]
    return b"".join(out)


def tool_stream(payload: dict[str, object], deltas: int) -> bytes:
    """Encode one tool_use message whose input arrives in `deltas` fragments."""
    raw = json.dumps(payload)
    step = max(1, len(raw) // deltas)
    frags = [
        {"type": "input_json_delta", "partial_json": raw[i : i + step]}
        for i in range(0, len(raw), step)
    ]
    block = {"type": "tool_use", "id": "toolu_bench", "name": "record", "input": {}}
    return one_block_message(block, frags, "tool_use")


def text_stream(deltas: int, seed: int = 3) -> bytes:
    """Encode one text message of `deltas` token-sized text deltas."""
    rng = random.Random(seed)
    words = ["You", " spent", " 339.14", " USD", " on", " groceries", " in", " October", "."]
    texts = [{"type": "text_delta", "text": rng.choice(words)} for _ in range(deltas)]
    return one_block_message({"type": "text", "text": ""}, texts, "end_turn")


def chunked(raw: bytes, size: int = 1400) -> list[bytes]:
    """Split bytes like network reads of about one TCP segment."""
    return [raw[i : i + size] for i in range(0, len(raw), size)]


def sdk_client(raw: bytes) -> anthropic.Anthropic:
    """An SDK client whose every request is answered with `raw` as an SSE body."""

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(
            200, headers={"content-type": "text/event-stream"}, stream=httpx2.ByteStream(raw)
        )

    return anthropic.Anthropic(
        api_key="bench",
        base_url="http://bench.invalid",
        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
    )

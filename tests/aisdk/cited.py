"""A model reply whose text blocks cite search results, as the API streams it."""

from __future__ import annotations

from typing import Any

from demo_model.wire import sse

Citation = dict[str, Any]


def citation(source: str, title: str, cited_text: str, index: int) -> Citation:
    """A `search_result_location` citation of the search result at `index` in the request."""
    return {
        "type": "search_result_location",
        "source": source,
        "title": title,
        "cited_text": cited_text,
        "search_result_index": index,
        "start_block_index": 0,
        "end_block_index": 1,
    }


def cited_reply(message_id: str, blocks: list[tuple[str, list[Citation]]]) -> bytes:
    """The SSE bytes of one `end_turn` message of text blocks, each with its citations.

    As the API sends them: a cited block's `citations_delta` events come before its text.
    """
    start = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 50, "output_tokens": 1},
    }
    out = [sse("message_start", {"type": "message_start", "message": start})]
    for index, (text, citations) in enumerate(blocks):
        block: dict[str, Any] = {"type": "text", "text": ""}
        if citations:
            block["citations"] = []
        head = {"type": "content_block_start", "index": index, "content_block": block}
        out.append(sse("content_block_start", head))
        deltas = [{"type": "citations_delta", "citation": c} for c in citations]
        deltas += [{"type": "text_delta", "text": text[i : i + 7]} for i in range(0, len(text), 7)]
        for delta in deltas:
            data = {"type": "content_block_delta", "index": index, "delta": delta}
            out.append(sse("content_block_delta", data))
        out.append(sse("content_block_stop", {"type": "content_block_stop", "index": index}))
    end = {"stop_reason": "end_turn", "stop_sequence": None}
    out.append(
        sse(
            "message_delta", {"type": "message_delta", "delta": end, "usage": {"output_tokens": 30}}
        )
    )
    out.append(sse("message_stop", {"type": "message_stop"}))
    return b"".join(out)

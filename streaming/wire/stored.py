"""Stored message rows as the events that show them: the one derivation, pure.

A stored assistant message becomes the events its live stream would have ended with: its
start, each block as it started, its text or thinking as one delta, each block's end (cut
off where it was cut; a thinking block with text, then its `progress` note), and its end; a
stored tool results message becomes its `tool_result` events. The replay of a turn whose log
is lost, a takeover's catch-up, the page's history (`?events=true` on the session API) and
the AI SDK's stored UIMessages all derive from here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NotRequired, TypedDict

from streaming.wire import events as E
from streaming.wire.events import Event

DISCARDED = "discarded"
_TOOL_CALLS = ("tool_use", "server_tool_use")
# Streamed as deltas: a block starts without them, as it did live.
_STREAMED = {"text": "text_delta", "thinking": "thinking_delta"}
# What a stored block keeps for us alone (never sent at block_start).
_OURS = ("input_error", "citations", "signature", "partial_json")


class StoredMessage(TypedDict):
    """A stored message row, as services read it (models.Message's columns)."""

    id: str
    role: str
    content: list[dict[str, Any]]
    partial_content: NotRequired[list[dict[str, Any]] | None]
    status: NotRequired[str]
    model: NotRequired[str | None]
    stop_reason: NotRequired[str | None]
    usage: NotRequired[dict[str, Any] | None]
    turn_id: NotRequired[str | None]
    client_id: NotRequired[str | None]


def message_events(row: StoredMessage) -> list[Event]:
    """Return the events that show a stored assistant message from start to end."""
    message_id = row["id"]
    out: list[Event] = [E.message_start(message_id, row.get("model"))]
    blocks = [(i, b, False) for i, b in enumerate(row["content"])]
    blocks += [(p.get("index", len(blocks)), p, True) for p in row.get("partial_content") or []]
    for index, block, partial in blocks:
        block_id = f"{message_id}.{index}"
        out.append(E.block_start(message_id, block_id, index, _as_started(block, partial)))
        for key, delta_type in _STREAMED.items():
            if block.get("type") == key and isinstance(block.get(key), str) and block[key]:
                delta = {"type": delta_type, key: block[key]}
                out.append(E.block_delta(message_id, block_id, delta))
        error, cut = _input_error(block)
        out.append(
            E.block_end(message_id, block_id, index, block, error=error, incomplete=partial or cut)
        )
        note = block.get("thinking") if block.get("type") == "thinking" and not partial else None
        if note and isinstance(note, str):
            out.append(E.progress(message_id, block_id, note))
    out.append(E.message_end(message_id, row.get("stop_reason"), row.get("usage")))
    return out


def attempt_events(row: StoredMessage) -> list[Event]:
    """Return the events of a discarded attempt: it started, then it was dropped.

    Only a view that keeps the steps attempts opened needs them (the AI SDK's); the rest
    leave discarded rows out.
    """
    return [E.message_start(row["id"], row.get("model")), E.message_discarded(row["id"], DISCARDED)]


def result_events(
    row: StoredMessage, names: dict[str, str], skip: set[str] | frozenset[str] = frozenset()
) -> list[Event]:
    """Return the `tool_result` events of a stored tool results message (but `skip`)."""
    return [
        E.tool_result(row["id"], b, names.get(b["tool_use_id"]))
        for b in row["content"]
        if b.get("type") == "tool_result" and b["tool_use_id"] not in skip
    ]


def tool_names(row: StoredMessage) -> dict[str, str]:
    """Map the tool_use ids of an assistant message to their tool names."""
    return {b["id"]: b.get("name", "") for b in row["content"] if "id" in b}


def asks(row: StoredMessage) -> bool:
    """True for a user's question (a user message that is not tool results)."""
    return row["role"] == "user" and not any(b.get("type") == "tool_result" for b in row["content"])


def row_events(
    rows: Iterable[StoredMessage], names: dict[str, str] | None = None
) -> list[list[Event]]:
    """Return each row's events, in order: a question and a discarded attempt show none.

    `names` maps tool_use ids of earlier rows (not given) to their tools, for the results.
    """
    known = dict(names or {})
    out: list[list[Event]] = []
    for row in rows:
        if row["role"] == "assistant":
            known.update(tool_names(row))
        if row.get("status") == DISCARDED or asks(row):
            out.append([])
        elif row["role"] == "assistant":
            out.append(message_events(row))
        else:
            out.append(result_events(row, known))
    return out


def _as_started(block: dict[str, Any], partial: bool) -> dict[str, Any]:
    """The block as its `block_start` showed it live: streamed fields empty."""
    kind = block.get("type")
    if kind in _STREAMED:
        return {"type": kind, kind: ""}
    started = {k: v for k, v in block.items() if k not in _OURS and not (partial and k == "index")}
    if kind in _TOOL_CALLS:
        started["input"] = {}
    return started


def _input_error(block: dict[str, Any]) -> tuple[str | None, bool]:
    """A stored tool call's input problem, and whether the output limit cut it, as streamed."""
    kept = block.get("input_error")
    if block.get("type") != "tool_use" or not isinstance(kept, dict):
        return None, False
    problem = kept.get("problem")
    return (str(problem) if problem else None), bool(kept.get("cut"))

"""Rebuild a finished turn's client events from stored messages when no archive exists."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from engine.events.log import Chunk
from models import Message, Turn
from models.db import Database
from streaming import protocol as P

_DELTA_KEYS = {"text": "text_delta", "thinking": "thinking_delta"}


def replay_turn(db: Database, turn_id: str, after: int) -> Chunk:
    """Rebuild a finished turn whose live events are lost (its worker died) from storage.

    The rebuilt events cannot match the lost numbering, so a reader that already had
    events (after > 0) gets them numbered from after+1, opened by a `turn_start` with
    `reset: true`: it drops what it showed for this turn and renders the rebuilt one.
    """
    with db.read() as s:
        turn = s.get(Turn, turn_id)
        rows = s.scalars(
            select(Message).where(Message.turn_id == turn_id).order_by(Message.position)
        ).all()
        events = turn_events(turn, rows) if turn else []
    if after and events:
        events[0] = (events[0][0], {**events[0][1], "reset": True})
    blob = b"".join(P.encode_event(after + i, t, d) for i, (t, d) in enumerate(events, 1))
    return Chunk(blob, after + len(events), True)


def turn_events(turn: Turn, rows: list[Message]) -> list[tuple[str, dict[str, Any]]]:
    """Return the event sequence a client needs to render a stored turn."""
    out: list[tuple[str, dict[str, Any]]] = []
    first_user = next((m.id for m in rows if m.role == "user"), None)
    out.append(
        (
            P.TURN_START,
            {
                "turn_id": turn.id,
                "session_id": turn.session_id,
                "user_message_id": first_user,
                "replayed": True,
            },
        )
    )
    names: dict[str, str] = {}
    for msg in rows:
        if msg.status == "discarded" or msg.id == first_user:
            continue
        if msg.role == "assistant":
            out.extend(message_events(msg))
            names.update(tool_names(msg))
        else:
            out.extend(tool_result_events(msg, names))
    if turn.error_code:
        out.append((P.ERROR, {"code": turn.error_code, "message": turn.error_message}))
    out.append((P.TURN_END, {"turn_id": turn.id, "status": turn.status}))
    return out


def tool_names(msg: Message) -> dict[str, str]:
    """Map the tool_use ids of an assistant message to their tool names."""
    return {b["id"]: b.get("name", "") for b in msg.content if "id" in b}


def tool_result_events(
    msg: Message, names: dict[str, str], skip: set[str] | frozenset[str] = frozenset()
) -> list[tuple[str, dict[str, Any]]]:
    """Return the `tool_result` events of a stored tool results message (but `skip`)."""
    return [
        (P.TOOL_RESULT, tool_result(msg.id, b, names.get(b["tool_use_id"])))
        for b in msg.content
        if b.get("type") == "tool_result" and b["tool_use_id"] not in skip
    ]


def tool_result(message_id: str, block: dict[str, Any], name: str | None) -> dict[str, Any]:
    """The `tool_result` event of one stored block (live, replayed or caught up alike)."""
    data = {
        "message_id": message_id,
        "tool_use_id": block["tool_use_id"],
        "name": name,
        "is_error": bool(block.get("is_error")),
        "content": block.get("content"),
    }
    if "declined" in block:
        data["declined"] = block["declined"]
    return data


def message_events(msg: Message) -> list[tuple[str, dict[str, Any]]]:
    """Return the events that show a stored assistant message from start to end."""
    out: list[tuple[str, dict[str, Any]]] = [
        (P.MESSAGE_START, {"message_id": msg.id, "role": "assistant", "model": msg.model})
    ]
    blocks = [(i, b, False) for i, b in enumerate(msg.content)]
    blocks += [(p.get("index", len(blocks)), p, True) for p in msg.partial_content or []]
    for index, block, partial in blocks:
        block_id = f"{msg.id}.{index}"
        kind = block.get("type")
        head = {"message_id": msg.id, "block_id": block_id, "index": index, "type": kind}
        out.append((P.BLOCK_START, {**head, "block": block}))
        for key, delta_type in _DELTA_KEYS.items():
            if isinstance(block.get(key), str) and block[key]:
                delta = {"type": delta_type, key: block[key]}
                out.append(
                    (P.BLOCK_DELTA, {"message_id": msg.id, "block_id": block_id, "delta": delta})
                )
        end = dict(head)
        for key in ("input", "signature", "citations"):
            if key in block:
                end[key] = block[key]
        if partial:
            end["incomplete"] = True
        out.append((P.BLOCK_END, end))
    out.append(
        (P.MESSAGE_END, {"message_id": msg.id, "stop_reason": msg.stop_reason, "usage": msg.usage})
    )
    return out

"""Hypothesis strategies for whole turns: our protocol events and the rows the engine stores.

A turn has rounds; a round has attempts that may be discarded (at any point, some re-sent
later with the same message id as after a worker crash), then a final attempt that completes,
is cut off, or never comes. Blocks of one message start in index order, their deltas
interleave freely and they end in start order, as the engine's accumulator orders content.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from hypothesis import strategies as st

Event = tuple[str, dict[str, Any]]
T = TypeVar("T")
TURN = "turn_t1"
QUESTION_ID = "msg_q"

_text = st.text(st.characters(blacklist_categories=["Cs"]), min_size=1, max_size=6)
_fragments = st.lists(_text, max_size=4)
# A strategy per distinct list of options, made once: hypothesis builds and validates a new
# strategy object at every `st.sampled_from(...)`, which was most of drawing a turn (a draw
# from the one made once is the same draw).
_SAMPLED: dict[tuple[Any, ...], st.SearchStrategy[Any]] = {}


def _sampled(options: Sequence[T]) -> st.SearchStrategy[T]:
    key = tuple(options)
    strategy = _SAMPLED.get(key)
    if strategy is None:
        strategy = _SAMPLED[key] = st.sampled_from(key)
    return strategy


_inputs = st.dictionaries(st.sampled_from(["a", "b", "ü"]), st.integers() | _text, max_size=3)


@dataclass
class Block:
    """One content block: its start, its deltas, its final and partial stored forms."""

    kind: str
    start: dict[str, Any]
    deltas: list[dict[str, Any]]
    final: dict[str, Any]
    end: dict[str, Any] = field(default_factory=dict)

    def partial(self, sent: int) -> dict[str, Any]:
        """Return the stored snapshot after `sent` deltas."""
        snap = dict(self.start)
        for delta in self.deltas[:sent]:
            for key, value in delta.items():
                if key == "partial_json":
                    snap["partial_json"] = snap.get("partial_json", "") + value
                elif key != "type" and isinstance(value, str) and key != "signature":
                    snap[key] = snap.get(key, "") + value
        return snap


@st.composite
def blocks(draw: st.DrawFn, tag: str) -> list[Block]:
    """Draw a message's blocks; `tag` keeps tool ids unique across the turn."""
    out: list[Block] = []
    kinds = draw(_kinds)
    for n, kind in enumerate(kinds):
        out += _block(draw, kind, f"{tag}_{n}")
    return out


# Sources repeat (one part per distinct source), and some citations name none.
_citations = st.fixed_dictionaries(
    {"type": st.just("search_result_location"), "cited_text": _text},
    optional={"source": st.sampled_from(["txn:1", "txn:2", "txns:category=Rent"]), "title": _text},
)
_KINDS = ["text", "text", "thinking", "redacted_thinking", "tool_use", "server", "mystery"]
_kinds = st.lists(st.sampled_from(_KINDS), max_size=5)


def _block(draw: st.DrawFn, kind: str, ident: str) -> list[Block]:
    if kind == "text":
        parts = draw(_fragments)
        cited = draw(st.lists(_citations, max_size=3))
        deltas = [{"type": "citations_delta", "citation": c} for c in cited]
        deltas += [{"type": "text_delta", "text": t} for t in parts]
        final = _final("text", parts)
        if not cited:
            return [Block("text", {"type": "text", "text": ""}, deltas, final)]
        end = {"citations": cited}
        return [Block("text", {"type": "text", "text": ""}, deltas, {**final, **end}, end)]
    if kind == "thinking":
        parts, sig = draw(_fragments), draw(_sampled(["", "sig"]))
        deltas = [{"type": "thinking_delta", "thinking": t} for t in parts]
        final = {"type": "thinking", "thinking": "".join(parts), "signature": sig}
        if sig:
            deltas.append({"type": "signature_delta", "signature": sig})
        start = {"type": "thinking", "thinking": "", "signature": ""}
        end = {"signature": sig} if sig else {}
        return [Block("thinking", start, deltas, final, end)]
    if kind == "redacted_thinking":
        block = {"type": "redacted_thinking", "data": f"opaque-{ident}"}
        return [Block("redacted_thinking", block, [], block)]
    if kind == "mystery":
        deltas = [{"type": "mystery_delta", "x": "y"}]
        return [Block("mystery", {"type": "mystery"}, deltas, {"type": "mystery", "x": "y"})]
    server = kind == "server"
    kind = "server_tool_use" if server else "tool_use"
    name = "web_search" if server else draw(_sampled(["get_transactions", "compare"]))
    tool_input = draw(_inputs)
    raw = json.dumps(tool_input, ensure_ascii=False)
    cuts = sorted(draw(st.lists(st.integers(0, len(raw)), max_size=3)))
    pieces = [raw[a:b] for a, b in zip([0, *cuts], [*cuts, len(raw)], strict=True)]
    deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces if p]
    call_id = f"toolu_{ident}"
    start = {"type": kind, "id": call_id, "name": name, "input": {}}
    final = {**start, "input": tool_input}
    out = [Block(kind, start, deltas, final, {"input": tool_input})]
    if server:
        result = {
            "type": "web_search_tool_result",
            "tool_use_id": call_id,
            "content": [{"type": "web_search_result", "url": "https://example.com"}],
        }
        out.append(Block("web_search_tool_result", result, [], result))
    return out


def _final(kind: str, parts: list[str]) -> dict[str, Any]:
    return {"type": kind, "text": "".join(parts)}


@dataclass
class Turn:
    """A generated turn: the events a reader sees and the rows and status the store keeps."""

    events: list[Event] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)
    status: str = "completed"
    error: tuple[str, str] | None = None
    stored_error: tuple[str, str] | None = None

    def turn_info(self) -> dict[str, Any]:
        """Return the turn as the store keeps it."""
        code, message = self.stored_error or (None, None)
        return {
            "id": TURN,
            "status": self.status,
            "error_code": code,
            "error_message": message,
            "continues": None,
            "question_id": self.rows[0]["id"],
        }


def _emit_message(
    draw: st.DrawFn, turn: Turn, message_id: str, spec: list[Block], cut: bool
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Emit one message's events; return (complete blocks, partial snapshots)."""
    turn.events.append(("message_start", {"message_id": message_id, "role": "assistant"}))
    sent = [0] * len(spec)
    started, ended, content = 0, 0, []
    budget = draw(st.integers(0, 40)) if cut else 10_000
    while budget > 0 and ended < len(spec):
        choices = []
        if started < len(spec):
            choices.append(("start", started))
        choices += [("delta", i) for i in range(ended, started) if sent[i] < len(spec[i].deltas)]
        if ended < started and sent[ended] == len(spec[ended].deltas):
            choices.append(("end", ended))
        action, i = draw(_sampled(choices))
        head = {"message_id": message_id, "block_id": f"{message_id}.{i}", "index": i}
        block = spec[i]
        if action == "start":
            data = {**head, "type": block.kind, "block": dict(block.start)}
            if "id" in block.start and "name" in block.start:
                data["tool_use_id"], data["name"] = block.start["id"], block.start["name"]
            turn.events.append(("block_start", data))
            started += 1
        elif action == "delta":
            delta = block.deltas[sent[i]]
            turn.events.append(("block_delta", {**head, "delta": delta}))
            sent[i] += 1
        else:
            turn.events.append(("block_end", {**head, "type": block.kind, **block.end}))
            content.append(block.final)
            ended += 1
        budget -= 1
    partial = []
    for i in range(ended, started):
        head = {"message_id": message_id, "block_id": f"{message_id}.{i}", "index": i}
        turn.events.append(("block_end", {**head, "type": spec[i].kind, "incomplete": True}))
        partial.append({"index": i, **spec[i].partial(sent[i])})
    return content, partial


@st.composite
def turns(draw: st.DrawFn) -> Turn:
    """Draw a whole turn."""
    turn = Turn()
    start = {"turn_id": TURN, "session_id": "ses", "user_message_id": QUESTION_ID}
    turn.events.append(("turn_start", start))
    question = [{"type": "text", "text": "question"}]
    turn.rows.append(_row(QUESTION_ID, question, None, "complete", "user"))
    rounds = draw(st.integers(1, 3))
    status = None
    for r in range(rounds):
        resend: str | None = None
        for a in range(draw(st.integers(0, 2))):
            mid = resend or f"msg_r{r}a{a}"
            spec = draw(blocks(f"r{r}a{a}"))
            _emit_message(draw, turn, mid, spec, cut=True)
            turn.events.append(("message_discarded", {"message_id": mid, "reason": "x"}))
            resend = mid if draw(st.booleans()) else None
            if resend is None and not any(row["id"] == mid for row in turn.rows):
                turn.rows.append(_row(mid, [], None, "discarded"))
        ending = draw(_sampled(["complete", "complete", "complete", "cut", "none"]))
        if ending == "none":
            status = draw(_sampled(["failed", "cancelled"]))
            if resend is not None:
                turn.rows.append(_row(resend, [], None, "discarded"))
            break
        mid = resend or f"msg_r{r}"
        spec = draw(blocks(f"r{r}"))
        content, partial = _emit_message(draw, turn, mid, spec, cut=ending == "cut")
        done = "incomplete" if ending == "cut" else "complete"
        turn.events.append(("message_end", {"message_id": mid, "stop_reason": "x"}))
        turn.rows.append(_row(mid, content, partial or None, done))
        tools = [b for b in content if b["type"] == "tool_use"]
        if ending == "cut":
            status = draw(_sampled(["failed", "cancelled"]))
            break
        if not tools:
            status = "completed"
            break
        _results(draw, turn, tools, r)
    if status is None:
        status = "max_rounds"
    turn.status = status
    if status == "failed":
        turn.error = turn.stored_error = ("overloaded_error", "The model is overloaded.")
    elif status == "completed" and draw(st.booleans()):
        turn.error = ("refusal", "The model declined to answer this request.")
    if turn.error:
        code, message = turn.error
        turn.events.append(("turn_error", {"code": code, "message": message}))
    turn.events.append(("turn_end", {"turn_id": TURN, "status": status}))
    return turn


def _results(draw: st.DrawFn, turn: Turn, tools: list[dict[str, Any]], n: int) -> None:
    mid = f"msg_results{n}"
    blocks_out = []
    for tool in tools:
        is_error = draw(st.booleans())
        text = draw(st.sampled_from(['{"total": "12.50"}', "[1, 2]", "plain", "{bad"]))
        content = [{"type": "text", "text": text}]
        data = {"message_id": mid, "tool_use_id": tool["id"], "name": tool["name"]}
        turn.events.append(("tool_result", {**data, "is_error": is_error, "content": content}))
        block = {"type": "tool_result", "tool_use_id": tool["id"], "content": content}
        blocks_out.append({**block, "is_error": True} if is_error else block)
    turn.rows.append(_row(mid, blocks_out, None, "complete", role="user"))


def _row(
    mid: str,
    content: list[dict[str, Any]],
    partial: list[dict[str, Any]] | None,
    status: str,
    role: str = "assistant",
) -> dict[str, Any]:
    return {
        "id": mid,
        "turn_id": TURN,
        "role": role,
        "content": content,
        "partial_content": partial,
        "status": status,
    }

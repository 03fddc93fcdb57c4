"""Stored messages as AI SDK UIMessages, and the part rules the UI stream shares: pure.

A turn is a user UIMessage (its question) and one assistant UIMessage with id = turn id, whose
steps are the turn's model messages in order. Tool results fill the tool parts they answer. A
run of discarded attempts belongs to the step of the retry that follows it; a run nobody
retried (the turn ended first) leaves an empty step, exactly as the live stream left it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

UIMessage = dict[str, Any]
Part = dict[str, Any]

CUT_OFF = "The tool call was cut off before its input was complete; it was not run."
_ERROR_FINISH = {
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content-filter",
}
_STATUS_FINISH = {"completed": "stop", "max_rounds": "tool-calls", "interrupted": "interrupted"}


def finish_reason(status: str, code: str | None) -> str:
    """Return the AI SDK finish reason for a turn that ended with `status` and error `code`."""
    if status == "failed":
        return _ERROR_FINISH.get(code or "", "error")
    if status == "completed" and code == "refusal":
        return "content-filter"
    return _STATUS_FINISH.get(status, "other")


def turn_metadata(status: str, code: str | None, message: str | None) -> dict[str, Any]:
    """Return the assistant message's metadata: its turn's status, and its error if it failed."""
    meta: dict[str, Any] = {"status": status}
    if code and status not in ("completed", "running"):
        meta["error"] = {"code": code, "message": message or ""}
    return meta


def result_text(content: Any) -> str:
    """Return the text of a tool result's content (a string or a list of blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        blocks = [b for b in content if isinstance(b, dict) and b.get("type") == "text"]
        return "".join(str(b.get("text", "")) for b in blocks)
    return ""


def tool_output(content: Any) -> Any:
    """Return a tool result as UI output: its JSON object or array if the text is one, else text."""
    if isinstance(content, list) and not all(
        isinstance(b, dict) and b.get("type") == "text" for b in content
    ):
        return content
    text = result_text(content)
    if text[:1] in ("{", "["):
        try:
            return json.loads(text)
        except (ValueError, RecursionError):
            pass
    return text


def stored_ui_messages(
    turns: Iterable[dict[str, Any]], rows: Iterable[dict[str, Any]]
) -> list[UIMessage]:
    """Return a session's UIMessages from its turns and message rows (in position order).

    A turn is a dict with `id`, `status`, `error_code`, `error_message`; a row has `id`,
    `turn_id`, `role`, `content`, `partial_content` and `status`.
    """
    by_turn: dict[str, list[dict[str, Any]]] = {}
    order: list[str] = []
    for row in rows:
        key = str(row.get("turn_id") or "")
        if key not in by_turn:
            by_turn[key] = []
            order.append(key)
        by_turn[key].append(row)
    info = {t["id"]: t for t in turns}
    out: list[UIMessage] = []
    for key in order:
        out += _turn_messages(info.get(key), by_turn[key])
    return out


def _turn_messages(turn: dict[str, Any] | None, rows: list[dict[str, Any]]) -> list[UIMessage]:
    out: list[UIMessage] = []
    assistant: UIMessage | None = None
    if turn is not None:
        meta = turn_metadata(turn["status"], turn.get("error_code"), turn.get("error_message"))
        assistant = {"id": turn["id"], "role": "assistant", "metadata": meta, "parts": []}
    parts: list[Part] = assistant["parts"] if assistant else []
    pending = False
    for row in rows:
        content = row.get("content") or []
        if row.get("role") == "user":
            if any(b.get("type") == "tool_result" for b in content):
                _fill_results(parts, content)
            else:
                out.append(_user_message(row))
            continue
        if row.get("status") == "discarded":
            pending = True
            continue
        pending = False
        parts.append({"type": "step-start"})
        parts += _assistant_parts(row["id"], content, row.get("partial_content") or [])
    if pending:
        parts.append({"type": "step-start"})
    if assistant is not None:
        out.append(assistant)
    return out


def _user_message(row: dict[str, Any]) -> UIMessage:
    parts = [
        {"type": "text", "text": b.get("text", "")}
        for b in row.get("content") or []
        if b.get("type") == "text"
    ]
    return {"id": row["id"], "role": "user", "parts": parts}


def _assistant_parts(
    message_id: str, content: list[dict[str, Any]], partial: list[dict[str, Any]]
) -> list[Part]:
    parts: list[Part] = []
    tools: set[str] = set()
    reasoning = 0
    blocks = [(b, False) for b in content]
    blocks += [(b, True) for b in sorted(partial, key=lambda p: p.get("index", 0))]
    for block, cut in blocks:
        kind = block.get("type")
        if kind == "text":
            parts.append({"type": "text", "text": block.get("text", ""), "state": "done"})
        elif kind in ("thinking", "redacted_thinking"):
            part: Part = {"type": "reasoning", "id": f"{message_id}.r{reasoning}", "state": "done"}
            reasoning += 1
            if kind == "thinking":
                part["text"] = block.get("thinking", "")
                if block.get("signature") and not cut:
                    part["providerMetadata"] = {"anthropic": {"signature": block["signature"]}}
            else:
                part["text"] = ""
                part["providerMetadata"] = {"anthropic": {"redactedData": block.get("data", "")}}
            parts.append(part)
        elif kind in ("tool_use", "server_tool_use"):
            call_id = str(block.get("id") or "")
            if not call_id or call_id in tools:
                continue
            tools.add(call_id)
            parts.append(_tool_part(block, call_id, cut))
        elif isinstance(kind, str) and kind.endswith("_tool_result") and not cut:
            _fill(parts, block.get("tool_use_id"), output=tool_output(block.get("content")))
    return parts


def _tool_part(block: dict[str, Any], call_id: str, cut: bool) -> Part:
    part: Part = {"type": f"tool-{block.get('name', '')}", "toolCallId": call_id}
    if cut:
        part.update(state="output-error", input=None, errorText=CUT_OFF)
    else:
        part.update(state="input-available", input=block.get("input") or {})
    if block.get("type") == "server_tool_use":
        part["providerExecuted"] = True
    return part


def _fill_results(parts: list[Part], content: list[dict[str, Any]]) -> None:
    for block in content:
        if block.get("type") != "tool_result":
            continue
        if block.get("is_error"):
            _fill(parts, block.get("tool_use_id"), error=result_text(block.get("content")))
        else:
            _fill(parts, block.get("tool_use_id"), output=tool_output(block.get("content")))


def _fill(parts: list[Part], call_id: Any, output: Any = None, error: str | None = None) -> None:
    """Record a result on the latest tool part with `call_id` that has its input."""
    for part in reversed(parts):
        if part.get("toolCallId") != call_id:
            continue
        if part.get("state") not in ("input-available", "output-available", "output-error"):
            return
        if part.get("errorText") == CUT_OFF:
            return
        part.pop("output", None)
        part.pop("errorText", None)
        if error is not None:
            part.update(state="output-error", errorText=error)
        else:
            part.update(state="output-available", output=output)
        return

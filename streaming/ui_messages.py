"""Stored messages as AI SDK UIMessages, and the part rules the UI stream shares: pure.

A turn is a user UIMessage (its question, under the id its client gave it) and one assistant
UIMessage with id = turn id, whose steps are the turn's model messages in order; a turn that
continues one paused for approval adds its steps to the paused turn's UIMessage. Tool results
fill the tool parts they answer. A run of discarded attempts belongs to the step of the retry
that follows it; a run nobody retried (the turn ended first) leaves an empty step, exactly as
the live stream left it.
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
# What a cited record is, to the SDK: the JSON the source's URL answers (docs/api.md).
SOURCE_MEDIA_TYPE = "application/json"
_STATUS_FINISH = {
    "completed": "stop",
    "max_rounds": "tool-calls",
    "awaiting_approval": "tool-calls",
    "interrupted": "interrupted",
}


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


def source_parts(citations: Any) -> list[Part]:
    """Return a `source-document` part per distinct source `citations` name, in cited order."""
    parts: list[Part] = []
    seen: set[str] = set()
    for citation in citations if isinstance(citations, list) else []:
        source = citation.get("source") if isinstance(citation, dict) else None
        if not isinstance(source, str) or source in seen:
            continue
        seen.add(source)
        title = citation.get("title")
        parts.append(
            {
                "type": "source-document",
                "sourceId": source,
                "mediaType": SOURCE_MEDIA_TYPE,
                "title": title if isinstance(title, str) else source,
            }
        )
    return parts


def stored_ui_messages(
    turns: Iterable[dict[str, Any]],
    rows: Iterable[dict[str, Any]],
    runs: dict[str, dict[str, Any]] | None = None,
) -> list[UIMessage]:
    """Return the UIMessages of a session's branch from its turns and rows (in position order).

    A turn is a dict with `id`, `status`, `error_code`, `error_message`, `continues` and
    `question_id`; a row has `id`, `turn_id`, `role`, `content`, `partial_content`, `status`
    and `client_id`. A user message keeps the id its client gave it. The turns of a chain of
    continuations (a turn paused for approval and the turns that went on from it) are one
    assistant UIMessage with the first one's id and the last one's status. `runs` maps the
    tool_use ids of side-effect calls to their `approval`, `reason`, `preview` and `status`.
    """
    return _Builder(list(turns), runs or {}).build(rows)


class _Builder:
    """Folds a branch's rows into UIMessages, one assistant message per chain of turns."""

    def __init__(self, turns: list[dict[str, Any]], runs: dict[str, dict[str, Any]]) -> None:
        self.info = {t["id"]: t for t in turns}
        self.turns, self.runs = turns, runs
        self.chains: dict[str, list[str]] = {}
        for turn in turns:
            self.chains.setdefault(self.head(turn["id"]), []).append(turn["id"])
        self.out: list[UIMessage] = []
        self.assistant: UIMessage | None = None
        self.pending = False
        self.asked: str | None = None

    def head(self, turn_id: str) -> str:
        """The first turn of the chain of continuations `turn_id` belongs to."""
        seen = {turn_id}
        while (earlier := (self.info.get(turn_id) or {}).get("continues")) and earlier not in seen:
            seen.add(earlier)
            turn_id = earlier
        return turn_id

    def build(self, rows: Iterable[dict[str, Any]]) -> list[UIMessage]:
        for row in rows:
            content = row.get("content") or []
            if row.get("role") == "user":
                if any(b.get("type") == "tool_result" for b in content):
                    if self.assistant is not None:
                        _fill_results(self.assistant["parts"], content)
                    continue
                self._close()
                self.out.append(_user_message(row))
                self.asked = row["id"]
                continue
            head = self.head(str(row.get("turn_id") or ""))
            self.asked = None  # answered on this branch
            if self.assistant is None or self.assistant["id"] != head:
                self._close()
                self.assistant = self._open(head)
            if row.get("status") == "discarded":
                self.pending = True
                continue
            self.pending = False
            parts = self.assistant["parts"]
            parts.append({"type": "step-start"})
            partial = row.get("partial_content") or []
            parts += _assistant_parts(row["id"], content, partial, self.runs)
        self._close()
        return self.out

    def _open(self, head: str) -> UIMessage:
        last = self.info.get(self.chains.get(head, [head])[-1]) or {"status": "completed"}
        meta = turn_metadata(last["status"], last.get("error_code"), last.get("error_message"))
        return {"id": head, "role": "assistant", "metadata": meta, "parts": []}

    def _close(self) -> None:
        if self.assistant is None and self.asked is not None:
            # A question nothing answered yet on the branch: its newest turn, still empty.
            asking = [
                t["id"]
                for t in self.turns
                if t.get("question_id") == self.asked and not t.get("continues")
            ]
            if asking:
                self.assistant = self._open(asking[-1])
        if self.assistant is not None:
            if self.pending:
                self.assistant["parts"].append({"type": "step-start"})
            self.out.append(self.assistant)
        self.assistant, self.pending, self.asked = None, False, None


def _user_message(row: dict[str, Any]) -> UIMessage:
    parts = [
        {"type": "text", "text": b.get("text", "")}
        for b in row.get("content") or []
        if b.get("type") == "text"
    ]
    return {"id": row.get("client_id") or row["id"], "role": "user", "parts": parts}


def _assistant_parts(
    message_id: str,
    content: list[dict[str, Any]],
    partial: list[dict[str, Any]],
    runs: dict[str, dict[str, Any]],
) -> list[Part]:
    parts: list[Part] = []
    tools: set[str] = set()
    reasoning = 0
    cited: list[Any] = []
    blocks = [(b, False) for b in content]
    blocks += [(b, True) for b in sorted(partial, key=lambda p: p.get("index", 0))]
    for block, cut in blocks:
        kind = block.get("type")
        if kind == "text":
            parts.append({"type": "text", "text": block.get("text", ""), "state": "done"})
            if not cut and isinstance(block.get("citations"), list):
                cited += block["citations"]
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
            # A call the output limit cut is stored whole, but was streamed as cut off.
            limit_cut = isinstance(block.get("input_error"), dict) and block["input_error"].get(
                "cut"
            )
            parts.append(_tool_part(block, call_id, cut or bool(limit_cut), runs.get(call_id)))
        elif isinstance(kind, str) and kind.endswith("_tool_result") and not cut:
            _fill(parts, block.get("tool_use_id"), output=tool_output(block.get("content")))
    return parts + source_parts(cited)


def _tool_part(block: dict[str, Any], call_id: str, cut: bool, run: dict[str, Any] | None) -> Part:
    part: Part = {"type": f"tool-{block.get('name', '')}", "toolCallId": call_id}
    if cut:
        part.update(state="output-error", input=None, errorText=CUT_OFF)
    else:
        part.update(state="input-available", input=block.get("input") or {})
        if run is not None:
            part.update(_approval_state(call_id, run))
    if block.get("type") == "server_tool_use":
        part["providerExecuted"] = True
    return part


def _approval_state(call_id: str, run: dict[str, Any]) -> Part:
    """A side-effect call's part state and `approval`, as the SDK's client leaves them."""
    approval: dict[str, Any] = {"id": call_id}
    if run.get("preview") is not None:
        approval["descriptor"] = run["preview"]
    if run.get("approval") is None:
        return {"state": "approval-requested", "approval": approval}
    approval["approved"] = run["approval"] == "approved"
    if run.get("reason") is not None:
        approval["reason"] = run["reason"]
    state = "approval-responded" if approval["approved"] else "output-denied"
    return {"state": state, "approval": approval}


def _fill_results(parts: list[Part], content: list[dict[str, Any]]) -> None:
    for block in content:
        if block.get("type") != "tool_result":
            continue
        if block.get("is_error"):
            _fill(parts, block.get("tool_use_id"), error=result_text(block.get("content")))
        else:
            _fill(parts, block.get("tool_use_id"), output=tool_output(block.get("content")))


_FILLED = ("input-available", "approval-responded", "output-available", "output-error")


def _fill(parts: list[Part], call_id: Any, output: Any = None, error: str | None = None) -> None:
    """Record a result on the latest tool part with `call_id` that has its input."""
    for part in reversed(parts):
        if part.get("toolCallId") != call_id:
            continue
        if part.get("state") not in _FILLED:
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

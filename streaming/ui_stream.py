"""Translate our turn events into the AI SDK's UI message stream chunks: pure, no I/O.

One turn is one assistant UIMessage (id = turn id); a turn that continues one paused for the
user's approval streams under the paused turn's message id (the caller names it), so the
approval follow-up continues the same UIMessage, as the SDK expects. Each model call is one
step. A side-effect call's `approval_requested` becomes `tool-approval-request`, and in the
continuation `approval_resolved` becomes `tool-approval-response` (plus `tool-output-denied`
for a denial, whose is_error result then stays out of the part), except to the client that sent
the decisions: its message holds them, and ai 6 has no such chunk. A discarded
model message becomes `reset-step` (the SDK drops every part of the current step) and its retry
continues that step. The sources its text blocks cite close a model message: one
`source-document` part per distinct source, after the message's other parts (blocks may
interleave, and the SDK appends parts as they start, so only there does the client's message
match the stored one). A resume names the client's step count: the stream swallows everything up
to that step's `start-step`, sends `reset-step` instead, and re-sends the step from its start,
so a client at any point inside that step ends equal to the server. `turn_start` with
`reset: true` (a rebuilt log) is handled the same way at the client's current step.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from streaming import protocol as P
from streaming.ui_messages import (
    CUT_OFF,
    finish_reason,
    result_text,
    source_parts,
    tool_output,
    turn_metadata,
)

Chunk = dict[str, Any]

UI_STREAM_HEADERS = {
    "x-vercel-ai-ui-message-stream": "v1",
    "Cache-Control": "no-store",
    "X-Accel-Buffering": "no",
}
DONE = b"data: [DONE]\n\n"
AHEAD = "The stream could not resume at the client's step: reload the conversation."
ENDED = "The turn's events ended unexpectedly; reload the conversation."
_TOOL_BLOCKS = ("tool_use", "server_tool_use")


@dataclass
class _Block:
    """An open block of the current message and the UI part it feeds."""

    kind: str  # text, reasoning, tool, result or ignored
    part_id: str = ""
    tool_name: str = ""
    provider: bool = False
    meta: dict[str, Any] | None = None
    block: dict[str, Any] | None = None


class UIStreamTranslator:
    """Feed our events in order; get the UI message stream chunks to send for each."""

    def __init__(
        self,
        resume_steps: int | None = None,
        message_id: str | None = None,
        decided: bool = False,
    ) -> None:
        # Steps the client holds; None means a fresh reader that gets everything.
        self.client_steps = resume_steps or 0
        # The UIMessage this turn streams into (None: its own, id = turn id).
        self.message_id = message_id
        # The reader sent the approval decisions this turn goes on with (the follow-up's POST).
        self.decided = decided
        self._hold: int | None = resume_steps
        self._seen = 0
        self.done = False
        self._started = False
        self._reset_turn()

    def _reset_turn(self) -> None:
        self._step_open = False
        self._retrying = False
        self._message: str | None = None
        self._step_message: str | None = None
        self._blocks: dict[str, _Block] = {}
        self._reasoning = 0
        # Citations of the message's ended text blocks; their sources close the message.
        self._cited: list[Any] = []
        self._tools: set[str] = set()
        self._message_tools: set[str] = set()
        self._denied: set[str] = set()
        # A continuation answers the paused message's calls before its first model call.
        self._continuing = False
        self._error: tuple[str, str] | None = None

    def feed(self, event_type: str, data: dict[str, Any]) -> list[Chunk]:
        """Return the chunks that `event_type` with `data` adds to the client's stream."""
        if self.done:
            return []
        handler = _HANDLERS.get(event_type)
        return self._filter(handler(self, data)) if handler else []

    def close(self) -> list[Chunk]:
        """End a stream whose events stopped without `turn_end` (a lost log)."""
        if self.done:
            return []
        self._error = ("stream_ended", ENDED)
        return self._filter(self._turn_end({"status": "failed"}))

    def _filter(self, chunks: list[Chunk]) -> list[Chunk]:
        """Drop what a resuming client already holds; replace its step's start with a reset."""
        out: list[Chunk] = []
        for chunk in chunks:
            kind = chunk["type"]
            if self._hold is None:
                self.client_steps += kind == "start-step"
                out.append(chunk)
            elif kind == "start":
                continue
            elif self._hold == 0:
                self._hold = None
                self.client_steps += kind == "start-step"
                out.append(chunk)
            elif kind == "start-step":
                self._seen += 1
                if self._seen == self._hold:
                    self._hold = None
                    out.append({"type": "reset-step"})
            elif kind in ("message-metadata", "error"):
                out.append(chunk)
            elif kind in ("finish", "abort"):
                # The record ends before the step the client claims: say so, then end.
                self._hold = None
                out += [{"type": "error", "errorText": AHEAD}, chunk]
        return out

    def _turn_start(self, data: dict[str, Any]) -> list[Chunk]:
        if self._started and not data.get("reset"):
            return []
        if self._started:
            # A rebuilt log: replay it, keeping only what follows the client's current step.
            self._reset_turn()
            self._hold, self._seen = self.client_steps, 0
        self._started = True
        self._continuing = bool(data.get("continues"))
        meta = {"status": "running"}
        message_id = self.message_id or data.get("turn_id")
        return [{"type": "start", "messageId": message_id, "messageMetadata": meta}]

    def _message_start(self, data: dict[str, Any]) -> list[Chunk]:
        out: list[Chunk] = [*self._close_blocks()]
        self._continuing = False
        if not self._retrying:
            if self._step_open:
                out.append({"type": "finish-step"})
            out.append({"type": "start-step"})
            self._step_open = True
        self._retrying = False
        self._message = self._step_message = data.get("message_id")
        self._reasoning = 0
        self._message_tools = set()
        return out

    def _block_start(self, data: dict[str, Any]) -> list[Chunk]:
        if self._message is None or data.get("message_id") != self._message:
            return []
        block_id, kind = str(data.get("block_id")), data.get("type")
        block = data.get("block") if isinstance(data.get("block"), dict) else {}
        if kind == "text":
            self._blocks[block_id] = _Block("text", block_id)
            return [{"type": "text-start", "id": block_id}]
        if kind in ("thinking", "redacted_thinking"):
            part_id = f"{self._message}.r{self._reasoning}"
            self._reasoning += 1
            meta = None
            if kind == "redacted_thinking":
                meta = {"anthropic": {"redactedData": block.get("data", "")}}
            self._blocks[block_id] = _Block("reasoning", part_id, meta=meta)
            start: Chunk = {"type": "reasoning-start", "id": part_id}
            return [{**start, "providerMetadata": meta}] if meta else [start]
        if kind in _TOOL_BLOCKS:
            return self._tool_start(block_id, kind, data, block)
        if isinstance(kind, str) and kind.endswith("_tool_result"):
            self._blocks[block_id] = _Block("result", block=block)
            return []
        self._blocks[block_id] = _Block("ignored")
        return []

    def _tool_start(
        self, block_id: str, kind: str, data: dict[str, Any], block: dict[str, Any]
    ) -> list[Chunk]:
        call_id = str(data.get("tool_use_id") or block.get("id") or "")
        if not call_id or call_id in self._message_tools:
            # The engine keeps the first of two tool calls with one id; so do we.
            self._blocks[block_id] = _Block("ignored")
            return []
        name = str(data.get("name") or block.get("name") or "")
        provider = kind == "server_tool_use"
        self._message_tools.add(call_id)
        self._blocks[block_id] = _Block("tool", call_id, name, provider)
        chunk: Chunk = {"type": "tool-input-start", "toolCallId": call_id, "toolName": name}
        return [{**chunk, "providerExecuted": True}] if provider else [chunk]

    def _block_delta(self, data: dict[str, Any]) -> list[Chunk]:
        block = self._blocks.get(str(data.get("block_id")))
        delta = data.get("delta") if isinstance(data.get("delta"), dict) else {}
        if block is None:
            return []
        kind = delta.get("type")
        if block.kind == "text" and kind == "text_delta" and delta.get("text"):
            return [{"type": "text-delta", "id": block.part_id, "delta": str(delta["text"])}]
        if block.kind == "reasoning" and kind == "thinking_delta" and delta.get("thinking"):
            return [{"type": "reasoning-delta", "id": block.part_id, "delta": delta["thinking"]}]
        if block.kind == "tool" and kind == "input_json_delta" and delta.get("partial_json"):
            fragment = str(delta["partial_json"])
            chunk = {"type": "tool-input-delta", "toolCallId": block.part_id}
            return [{**chunk, "inputTextDelta": fragment}]
        return []

    def _block_end(self, data: dict[str, Any]) -> list[Chunk]:
        block = self._blocks.pop(str(data.get("block_id")), None)
        return self._end_block(block, data) if block else []

    def _end_block(self, block: _Block, data: dict[str, Any]) -> list[Chunk]:
        incomplete = bool(data.get("incomplete"))
        if block.kind == "text":
            if not incomplete and isinstance(data.get("citations"), list):
                self._cited += data["citations"]
            return [{"type": "text-end", "id": block.part_id}]
        if block.kind == "reasoning":
            meta = block.meta
            if meta is None and data.get("signature") and not incomplete:
                meta = {"anthropic": {"signature": data["signature"]}}
            end: Chunk = {"type": "reasoning-end", "id": block.part_id}
            return [{**end, "providerMetadata": meta}] if meta else [end]
        if block.kind == "tool":
            head: Chunk = {"toolCallId": block.part_id, "toolName": block.tool_name}
            if block.provider:
                head["providerExecuted"] = True
            if incomplete:
                return [{"type": "tool-input-error", **head, "input": None, "errorText": CUT_OFF}]
            self._tools.add(block.part_id)
            return [{"type": "tool-input-available", **head, "input": data.get("input") or {}}]
        if block.kind == "result" and block.block and not incomplete:
            call_id = block.block.get("tool_use_id")
            if call_id in self._tools:
                output = tool_output(block.block.get("content"))
                return [
                    {
                        "type": "tool-output-available",
                        "toolCallId": call_id,
                        "output": output,
                        "providerExecuted": True,
                    }
                ]
        return []

    def _close_blocks(self) -> list[Chunk]:
        """End blocks a message left open (the protocol forbids it; never trust it)."""
        out: list[Chunk] = []
        for block in list(self._blocks.values()):
            out += self._end_block(block, {"incomplete": True})
        self._blocks = {}
        out += source_parts(self._cited)
        self._cited = []
        return out

    def _message_end(self, data: dict[str, Any]) -> list[Chunk]:
        if data.get("message_id") != self._message:
            return []
        self._message = None
        return self._close_blocks()

    def _message_discarded(self, data: dict[str, Any]) -> list[Chunk]:
        if data.get("message_id") != self._step_message or not self._step_open:
            return []
        # The SDK cannot remove parts one by one: drop the whole step, keep its step-start,
        # and let the retry fill it again.
        self._blocks, self._cited = {}, []
        self._tools -= self._message_tools
        self._message, self._retrying = None, True
        return [{"type": "reset-step"}]

    def _approval_requested(self, data: dict[str, Any]) -> list[Chunk]:
        call_id = data.get("tool_use_id")
        if call_id not in self._tools:
            return []
        chunk: Chunk = {"type": "tool-approval-request", "approvalId": call_id}
        return [{**chunk, "toolCallId": call_id, "approvalDescriptor": data.get("preview")}]

    def _approval_resolved(self, data: dict[str, Any]) -> list[Chunk]:
        call_id = data.get("tool_use_id")
        if not isinstance(call_id, str) or not (self._continuing or call_id in self._tools):
            return []
        self._tools.add(call_id)
        approved = bool(data.get("approved"))
        out: list[Chunk] = []
        if not self.decided:
            chunk = {"type": "tool-approval-response", "approvalId": call_id, "approved": approved}
            out.append(chunk)
        if not approved:
            self._denied.add(call_id)
            out.append({"type": "tool-output-denied", "toolCallId": call_id})
        return out

    def _tool_result(self, data: dict[str, Any]) -> list[Chunk]:
        call_id = data.get("tool_use_id")
        if self._continuing and isinstance(call_id, str):
            self._tools.add(call_id)  # a call of the paused message, held by the client
        if call_id not in self._tools or call_id in self._denied:
            return []
        if data.get("is_error"):
            text = result_text(data.get("content"))
            return [{"type": "tool-output-error", "toolCallId": call_id, "errorText": text}]
        output = tool_output(data.get("content"))
        return [{"type": "tool-output-available", "toolCallId": call_id, "output": output}]

    def _context_trimmed(self, data: dict[str, Any]) -> list[Chunk]:
        # Transient: useChat hands it to onData and keeps it out of the message's parts.
        return [{"type": "data-context-trimmed", "data": data, "transient": True}]

    def _turn_error(self, data: dict[str, Any]) -> list[Chunk]:
        self._error = (str(data.get("code") or "error"), str(data.get("message") or ""))
        return []

    def _turn_end(self, data: dict[str, Any]) -> list[Chunk]:
        status = str(data.get("status") or "failed")
        out = self._close_blocks()
        if self._step_open:
            out.append({"type": "finish-step"})
            self._step_open = False
        code, message = self._error or (None, None)
        meta = turn_metadata(status, code, message)
        # Metadata and error precede the end: useChat stops reading at an `error` chunk.
        out.append({"type": "message-metadata", "messageMetadata": meta})
        if status in ("failed", "interrupted"):
            out.append({"type": "error", "errorText": message or "The turn failed."})
        if status == "cancelled":
            out.append({"type": "abort", "reason": "cancelled"})
        else:
            out.append({"type": "finish", "finishReason": finish_reason(status, code)})
        self.done = True
        return out


_HANDLERS = {
    P.TURN_START: UIStreamTranslator._turn_start,
    P.MESSAGE_START: UIStreamTranslator._message_start,
    P.BLOCK_START: UIStreamTranslator._block_start,
    P.BLOCK_DELTA: UIStreamTranslator._block_delta,
    P.BLOCK_END: UIStreamTranslator._block_end,
    P.MESSAGE_END: UIStreamTranslator._message_end,
    P.MESSAGE_DISCARDED: UIStreamTranslator._message_discarded,
    P.TOOL_RESULT: UIStreamTranslator._tool_result,
    P.APPROVAL_REQUESTED: UIStreamTranslator._approval_requested,
    P.APPROVAL_RESOLVED: UIStreamTranslator._approval_resolved,
    P.CONTEXT_TRIMMED: UIStreamTranslator._context_trimmed,
    P.ERROR: UIStreamTranslator._turn_error,
    P.TURN_END: UIStreamTranslator._turn_end,
}

_LINE_BREAKS = {0x2028: "\\u2028", 0x2029: "\\u2029", 0x85: "\\u0085"}


def encode_chunks(chunks: list[Chunk]) -> bytes:
    """Encode chunks as SSE `data:` frames (one compact JSON object per frame)."""
    out = []
    for chunk in chunks:
        payload = json.dumps(chunk, separators=(",", ":"), ensure_ascii=False)
        if "\u2028" in payload or "\u2029" in payload or "\x85" in payload:
            payload = payload.translate(_LINE_BREAKS)
        try:
            out.append(f"data: {payload}\n\n".encode())
        except UnicodeEncodeError:
            # Lone surrogates cannot be UTF-8 encoded; ASCII-escaped JSON still carries them.
            out.append(f"data: {json.dumps(chunk, separators=(',', ':'))}\n\n".encode())
    return b"".join(out)

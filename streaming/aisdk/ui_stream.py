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
The chunks themselves are typed in streaming/aisdk/ui_chunks.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from streaming.aisdk import ui_chunks as C
from streaming.aisdk.ui_chunks import CUT_OFF, UIChunk
from streaming.wire import events as E
from streaming.wire.events import (
    ApprovalRequested,
    ApprovalResolved,
    BlockDelta,
    BlockEnd,
    BlockStart,
    ContextTrimmed,
    MessageDiscarded,
    MessageEnd,
    MessageStart,
    ToolResult,
    TurnEnd,
    TurnError,
    TurnStart,
)

Chunk = UIChunk

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
        reasons: bool = False,
    ) -> None:
        # Steps the client holds; None means a fresh reader that gets everything.
        self.client_steps = resume_steps or 0
        # The UIMessage this turn streams into (None: its own, id = turn id).
        self.message_id = message_id
        # The reader sent the approval decisions this turn goes on with (the follow-up's POST).
        self.decided = decided
        # Decisions carry the reason given (the stored view: what the deciding client holds).
        self.reasons = reasons
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

    def feed(self, event_type: str, data: Any) -> list[Chunk]:
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
        return self._filter(self._turn_end({"turn_id": "", "status": "failed"}))

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
                    out.append(C.RESET_STEP)
            elif kind in ("message-metadata", "error"):
                out.append(chunk)
            elif kind in ("finish", "abort"):
                # The record ends before the step the client claims: say so, then end.
                self._hold = None
                out += [C.error(AHEAD), chunk]
        return out

    def _turn_start(self, data: TurnStart) -> list[Chunk]:
        if self._started and not data.get("reset"):
            return []
        if self._started:
            # A rebuilt log: replay it, keeping only what follows the client's current step.
            self._reset_turn()
            self._hold, self._seen = self.client_steps, 0
        self._started = True
        self._continuing = bool(data.get("continues"))
        return [C.start(self.message_id or data.get("turn_id"), {"status": "running"})]

    def _message_start(self, data: MessageStart) -> list[Chunk]:
        out: list[Chunk] = [*self._close_blocks()]
        self._continuing = False
        if not self._retrying:
            if self._step_open:
                out.append(C.FINISH_STEP)
            out.append(C.START_STEP)
            self._step_open = True
        self._retrying = False
        self._message = self._step_message = data.get("message_id")
        self._reasoning = 0
        self._message_tools = set()
        return out

    def _block_start(self, data: BlockStart) -> list[Chunk]:
        if self._message is None or data.get("message_id") != self._message:
            return []
        block_id, kind = str(data.get("block_id")), data.get("type")
        started = data.get("block")
        block: dict[str, Any] = started if isinstance(started, dict) else {}
        if kind == "text":
            self._blocks[block_id] = _Block("text", block_id)
            return [C.text_start(block_id)]
        if kind in ("thinking", "redacted_thinking"):
            part_id = f"{self._message}.r{self._reasoning}"
            self._reasoning += 1
            meta = None
            if kind == "redacted_thinking":
                meta = {"anthropic": {"redactedData": block.get("data", "")}}
            self._blocks[block_id] = _Block("reasoning", part_id, meta=meta)
            return [C.reasoning_start(part_id, meta)]
        if kind in _TOOL_BLOCKS:
            return self._tool_start(block_id, kind, data, block)
        if isinstance(kind, str) and kind.endswith("_tool_result"):
            self._blocks[block_id] = _Block("result", block=block)
            return []
        self._blocks[block_id] = _Block("ignored")
        return []

    def _tool_start(
        self, block_id: str, kind: str, data: BlockStart, block: dict[str, Any]
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
        return [C.tool_input_start(call_id, name, provider)]

    def _block_delta(self, data: BlockDelta) -> list[Chunk]:
        block = self._blocks.get(str(data.get("block_id")))
        sent = data.get("delta")
        delta: dict[str, Any] = sent if isinstance(sent, dict) else {}
        if block is None:
            return []
        kind = delta.get("type")
        if block.kind == "text" and kind == "text_delta" and delta.get("text"):
            return [C.text_delta(block.part_id, str(delta["text"]))]
        if block.kind == "reasoning" and kind == "thinking_delta" and delta.get("thinking"):
            return [C.reasoning_delta(block.part_id, delta["thinking"])]
        if block.kind == "tool" and kind == "input_json_delta" and delta.get("partial_json"):
            return [C.tool_input_delta(block.part_id, str(delta["partial_json"]))]
        return []

    def _block_end(self, data: BlockEnd) -> list[Chunk]:
        block = self._blocks.pop(str(data.get("block_id")), None)
        return self._end_block(block, data) if block else []

    def _end_block(self, block: _Block, ended: BlockEnd | None) -> list[Chunk]:
        """The chunks that end `block`: as `ended` says, or cut off (None)."""
        data: BlockEnd | dict[str, Any] = ended if ended is not None else {}
        incomplete = ended is None or bool(data.get("incomplete"))
        if block.kind == "text":
            citations = data.get("citations")
            if not incomplete and isinstance(citations, list):
                self._cited += citations
            return [C.text_end(block.part_id)]
        if block.kind == "reasoning":
            meta = block.meta
            if meta is None and data.get("signature") and not incomplete:
                meta = {"anthropic": {"signature": data.get("signature")}}
            return [C.reasoning_end(block.part_id, meta)]
        if block.kind == "tool":
            call_id, name, provider = block.part_id, block.tool_name, block.provider
            if incomplete:
                return [C.tool_input_error(call_id, name, provider, CUT_OFF)]
            self._tools.add(call_id)
            return [C.tool_input_available(call_id, name, provider, data.get("input") or {})]
        if block.kind == "result" and block.block and not incomplete:
            result_of = block.block.get("tool_use_id")
            if isinstance(result_of, str) and result_of in self._tools:
                output = C.tool_output(block.block.get("content"))
                return [C.tool_output_available(result_of, output, True)]
        return []

    def _close_blocks(self) -> list[Chunk]:
        """End blocks a message left open (the protocol forbids it; never trust it)."""
        out: list[Chunk] = []
        for block in list(self._blocks.values()):
            out += self._end_block(block, None)
        self._blocks = {}
        out += C.source_documents(self._cited)
        self._cited = []
        return out

    def _message_end(self, data: MessageEnd) -> list[Chunk]:
        if data.get("message_id") != self._message:
            return []
        self._message = None
        return self._close_blocks()

    def _message_discarded(self, data: MessageDiscarded) -> list[Chunk]:
        if data.get("message_id") != self._step_message or not self._step_open:
            return []
        # The SDK cannot remove parts one by one: drop the whole step, keep its step-start,
        # and let the retry fill it again.
        self._blocks, self._cited = {}, []
        self._tools -= self._message_tools
        self._message, self._retrying = None, True
        return [C.RESET_STEP]

    def _approval_requested(self, data: ApprovalRequested) -> list[Chunk]:
        call_id = data.get("tool_use_id")
        if call_id not in self._tools:
            return []
        return [C.tool_approval_request(call_id, data.get("preview"))]

    def _approval_resolved(self, data: ApprovalResolved) -> list[Chunk]:
        call_id = data.get("tool_use_id")
        if not isinstance(call_id, str) or not (self._continuing or call_id in self._tools):
            return []
        self._tools.add(call_id)
        approved = bool(data.get("approved"))
        out: list[Chunk] = []
        if not self.decided:
            reason = data.get("reason") if self.reasons else None
            out.append(C.tool_approval_response(call_id, approved, reason))
        if not approved:
            self._denied.add(call_id)
            out.append(C.tool_output_denied(call_id))
        return out

    def _tool_result(self, data: ToolResult) -> list[Chunk]:
        call_id = data.get("tool_use_id")
        if self._continuing and isinstance(call_id, str):
            self._tools.add(call_id)  # a call of the paused message, held by the client
        if call_id not in self._tools or call_id in self._denied:
            return []
        if data.get("is_error"):
            return [C.tool_output_error(call_id, C.result_text(data.get("content")))]
        output = C.tool_output(data.get("content"))
        # A chart the tools drew also travels as data parts, for a client to draw as it is.
        return [C.tool_output_available(call_id, output, False), *C.charts(call_id, output)]

    def _context_trimmed(self, data: ContextTrimmed) -> list[Chunk]:
        return [C.context_trimmed(data)]

    def _turn_error(self, data: TurnError) -> list[Chunk]:
        self._error = (str(data.get("code") or "error"), str(data.get("message") or ""))
        return []

    def _turn_end(self, data: TurnEnd) -> list[Chunk]:
        status = str(data.get("status") or "failed")
        out = self._close_blocks()
        if self._step_open:
            out.append(C.FINISH_STEP)
            self._step_open = False
        code, message = self._error or (None, None)
        # Metadata and error precede the end: useChat stops reading at an `error` chunk.
        out.append(C.message_metadata(C.turn_metadata(status, code, message)))
        if status in ("failed", "interrupted"):
            out.append(C.error(message or "The turn failed."))
        if status == "cancelled":
            out.append(C.abort("cancelled"))
        else:
            out.append(C.finish(C.finish_reason(status, code)))
        self.done = True
        return out


_HANDLERS: dict[str, Callable[[UIStreamTranslator, Any], list[Chunk]]] = {
    E.TURN_START: UIStreamTranslator._turn_start,
    E.MESSAGE_START: UIStreamTranslator._message_start,
    E.BLOCK_START: UIStreamTranslator._block_start,
    E.BLOCK_DELTA: UIStreamTranslator._block_delta,
    E.BLOCK_END: UIStreamTranslator._block_end,
    E.MESSAGE_END: UIStreamTranslator._message_end,
    E.MESSAGE_DISCARDED: UIStreamTranslator._message_discarded,
    E.TOOL_RESULT: UIStreamTranslator._tool_result,
    E.APPROVAL_REQUESTED: UIStreamTranslator._approval_requested,
    E.APPROVAL_RESOLVED: UIStreamTranslator._approval_resolved,
    E.CONTEXT_TRIMMED: UIStreamTranslator._context_trimmed,
    E.ERROR: UIStreamTranslator._turn_error,
    E.TURN_END: UIStreamTranslator._turn_end,
}

_LINE_BREAKS = {0x2028: "\\u2028", 0x2029: "\\u2029", 0x85: "\\u0085"}


def encode_chunks(chunks: Sequence[Chunk]) -> bytes:
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

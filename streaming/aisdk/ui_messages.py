"""Stored messages as AI SDK UIMessages: their events, translated and folded as useChat folds.

A turn is a user UIMessage (its question, under the id its client gave it) and one assistant
UIMessage with id = turn id, whose steps are the turn's model messages in order; a turn that
continues one paused for approval adds its steps to the paused turn's UIMessage. Nothing
here builds parts from rows: each chain of turns is shown by the events stored rows derive
(streaming/wire/stored.py, the derivation every view of storage shares), run through the live
stream's own translation (streaming/aisdk/ui_stream.py) and folded into a UIMessage as the SDK's
client folds the chunks (`ChunkFold`). So a reload shows exactly what a live client ended with:
a discarded attempt opens the step its retry fills (or leaves it empty when nobody retried),
a tool call the output limit cut is an input error, results fill the parts they answer.

The one thing storage adds: a decision's `reason`. The live stream's `tool-approval-response`
carries none (the client that decided holds it, ai 6 has no such chunk), while the stored
view shows it, as the deciding client's message does.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

from streaming.aisdk import ui_chunks as C
from streaming.aisdk.ui_chunks import UIChunk
from streaming.aisdk.ui_stream import UIStreamTranslator
from streaming.wire import events as E
from streaming.wire import stored
from streaming.wire.events import Event
from streaming.wire.stored import StoredMessage

UIMessage = dict[str, Any]
Part = dict[str, Any]
# A turn still to run or running has not sent turn_end: its message shows its status so far.
_UNENDED = ("queued", "running")


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
    return _Branch(list(turns), runs or {}).build(rows)


class ChunkFold:
    """One assistant UIMessage built from UI chunks, as the SDK's processUIMessageStream does."""

    def __init__(self, message_id: str) -> None:
        self.message: UIMessage = {"id": message_id, "role": "assistant", "metadata": {}}
        self.parts: list[Part] = []
        self.message["parts"] = self.parts
        self._text: dict[str, Part] = {}
        self._reasoning: dict[str, Part] = {}

    def apply(self, chunk: UIChunk) -> None:
        """Apply one chunk to the message."""
        kind, parts = chunk["type"], self.parts
        if chunk["type"] == "start":
            if chunk["messageId"] is not None:
                self.message["id"] = chunk["messageId"]
            self._merge(dict(chunk["messageMetadata"]))
        elif chunk["type"] == "message-metadata":
            self._merge(dict(chunk["messageMetadata"]))
        elif kind == "start-step":
            parts.append({"type": "step-start"})
        elif kind == "reset-step":
            del parts[self._step() :]
            self._text, self._reasoning = {}, {}
        elif chunk["type"] == "text-start":
            self._text[chunk["id"]] = {"type": "text", "text": "", "state": "streaming"}
            parts.append(self._text[chunk["id"]])
        elif chunk["type"] == "reasoning-start":
            part: Part = {"type": "reasoning", "id": chunk["id"], "text": "", "state": "streaming"}
            if "providerMetadata" in chunk:
                part["providerMetadata"] = chunk["providerMetadata"]
            self._reasoning[chunk["id"]] = part
            parts.append(part)
        elif chunk["type"] in ("text-delta", "reasoning-delta"):
            active = self._text if chunk["type"] == "text-delta" else self._reasoning
            active[chunk["id"]]["text"] += chunk["delta"]
        elif chunk["type"] == "text-end":
            self._text.pop(chunk["id"])["state"] = "done"
        elif chunk["type"] == "reasoning-end":
            part = self._reasoning.pop(chunk["id"])
            part["state"] = "done"
            if "providerMetadata" in chunk:
                part["providerMetadata"] = chunk["providerMetadata"]
        elif chunk["type"] == "source-document":
            parts.append({k: v for k, v in chunk.items() if v is not None})
        elif kind.startswith("tool-"):
            self._tool(chunk)
        # finish-step, finish, abort and error end things the message does not keep;
        # data-context-trimmed is transient.

    def _tool(self, chunk: UIChunk) -> None:
        if chunk["type"] == "tool-input-start":
            executed = chunk.get("providerExecuted")
            self._update(chunk["toolCallId"], chunk["toolName"], executed, state="input-streaming")
        elif chunk["type"] == "tool-input-delta":
            part = self._find(chunk["toolCallId"])
            part["rawInput"] = part.get("rawInput", "") + chunk["inputTextDelta"]
        elif chunk["type"] == "tool-input-available":
            executed = chunk.get("providerExecuted")
            fields = {"state": "input-available", "input": chunk["input"]}
            self._update(chunk["toolCallId"], chunk["toolName"], executed, **fields)
        elif chunk["type"] == "tool-input-error":
            executed = chunk.get("providerExecuted")
            fields = {"state": "output-error", "input": None, "errorText": chunk["errorText"]}
            self._update(chunk["toolCallId"], chunk["toolName"], executed, **fields)
        elif chunk["type"] == "tool-approval-request":
            approval: dict[str, Any] = {"id": chunk["approvalId"]}
            if chunk["approvalDescriptor"] is not None:
                approval["descriptor"] = chunk["approvalDescriptor"]
            self._find(chunk["toolCallId"]).update(state="approval-requested", approval=approval)
        elif chunk["type"] == "tool-approval-response":
            part = next(
                p for p in self.parts if (p.get("approval") or {}).get("id") == chunk["approvalId"]
            )
            decided = {**part["approval"], "approved": chunk["approved"]}
            if "reason" in chunk:
                decided["reason"] = chunk["reason"]
            part.update(state="approval-responded", approval=decided)
        elif chunk["type"] == "tool-output-denied":
            self._find(chunk["toolCallId"])["state"] = "output-denied"
        elif chunk["type"] == "tool-output-available":
            part = self._find(chunk["toolCallId"])
            for key in ("output", "errorText", "rawInput"):
                part.pop(key, None)
            part.update(state="output-available", output=chunk["output"])
            if "providerExecuted" in chunk:
                part["providerExecuted"] = chunk["providerExecuted"]
        elif chunk["type"] == "tool-output-error":
            part = self._find(chunk["toolCallId"])
            part.pop("output", None)
            part.update(state="output-error", errorText=chunk["errorText"])

    def _step(self) -> int:
        """Where the current step's parts begin."""
        starts = [i for i, p in enumerate(self.parts) if p["type"] == "step-start"]
        return starts[-1] + 1 if starts else 0

    def _find(self, call_id: str) -> Part:
        """The tool part of `call_id`: the current step's, else the message's latest."""
        step = self.parts[self._step() :]
        for part in [*reversed(step), *reversed(self.parts)]:
            if part.get("toolCallId") == call_id:
                return part
        raise KeyError(call_id)

    def _update(self, call_id: str, name: str, executed: bool | None, **fields: Any) -> None:
        """Start or restate the current step's part of a tool call."""
        step = self.parts[self._step() :]
        part = next((p for p in step if p.get("toolCallId") == call_id), None)
        if part is None:
            part = {"type": f"tool-{name}", "toolCallId": call_id}
            self.parts.append(part)
        else:
            for key in ("input", "output", "errorText", "rawInput"):
                part.pop(key, None)
            part["type"] = f"tool-{name}"
            executed = executed if executed is not None else part.get("providerExecuted")
        part.update(fields)
        if executed is not None:
            part["providerExecuted"] = executed

    def _merge(self, meta: dict[str, Any]) -> None:
        self.message["metadata"] = _merge(self.message["metadata"], meta)


def _merge(base: Any, extra: Any) -> Any:
    """Deep-merge `extra` into `base`, as the SDK merges message metadata."""
    if not isinstance(base, dict) or not isinstance(extra, dict):
        return extra
    out = dict(base)
    for key, value in extra.items():
        out[key] = _merge(out.get(key), value) if isinstance(value, dict) else value
    return out


class _Chain:
    """One assistant UIMessage: the turns of a chain of continuations, fed in order."""

    def __init__(
        self, head: str, turn_ids: list[str], info: dict[str, dict[str, Any]], runs: dict[str, Any]
    ) -> None:
        self.head, self.turn_ids, self.info, self.runs = head, turn_ids, info, runs
        self.fold = ChunkFold(head)
        self.at = -1  # the turn being fed, in turn_ids
        self.translator: UIStreamTranslator | None = None
        self.names: dict[str, str] = {}
        # Calls that asked for approval, and those whose decision was fed since.
        self.asked: list[str] = []
        self.resolved: set[str] = set()

    def assistant(self, row: StoredMessage) -> None:
        """Feed a stored model message (or a discarded attempt at one)."""
        self._enter(row.get("turn_id"))
        self.names.update(stored.tool_names(row))
        if row.get("status") == stored.DISCARDED:
            self._feed(stored.attempt_events(row))
            return
        self._feed(stored.message_events(row))
        # The turn asked for approval of its side-effect calls once the message ended.
        for block in row["content"]:
            run = self.runs.get(block.get("id") or "")
            if block.get("type") == "tool_use" and run is not None:
                self.asked.append(block["id"])
                turn_id = str(row.get("turn_id") or self.head)
                name, tool_input = block.get("name", ""), block.get("input") or {}
                preview = run.get("preview")
                # No deadline: storage keeps none, and no view of it shows one.
                request = E.approval_requested(
                    turn_id, block["id"], name, tool_input, preview, None
                )
                self._feed([request])

    def results(self, row: StoredMessage) -> None:
        """Feed a stored tool results message, after the decisions it reports."""
        self._enter(row.get("turn_id"))
        answered = [b["tool_use_id"] for b in row["content"] if b.get("type") == "tool_result"]
        self._resolve([call for call in self.asked if call in answered])
        self._feed(stored.result_events(row, self.names))

    def close(self) -> UIMessage:
        """Feed the chain's remaining turns and end the last; return the message."""
        while self.at < len(self.turn_ids) - 1:
            self._next()
        self._end()
        return self.fold.message

    def _enter(self, turn_id: str | None) -> None:
        """Move on to `turn_id` when it is a later turn of the chain (else stay)."""
        later = self.turn_ids[self.at + 1 :]
        if self.translator is None or turn_id in later:
            target = self.at + 1 + later.index(turn_id) if turn_id in later else self.at + 1
            while self.at < target:
                self._next()

    def _next(self) -> None:
        """End the turn being fed, and start the next one of the chain."""
        if self.translator is not None:
            self._end()
        self.at += 1
        turn_id = self.turn_ids[self.at]
        turn = self.info.get(turn_id) or {}
        self.translator = UIStreamTranslator(message_id=self.head, reasons=True)
        continues = turn.get("continues")
        self._feed([E.turn_start(turn_id, "", turn.get("question_id"), continues=continues)])
        if continues:
            # A continuation first says how the calls it goes on with were decided.
            self._resolve(self.asked)

    def _end(self) -> None:
        """End the turn being fed as it ended (one still to end shows its status)."""
        if self.translator is None:
            return
        turn_id = self.turn_ids[self.at]
        turn = self.info.get(turn_id) or {"status": "completed"}
        status, code = str(turn.get("status")), turn.get("error_code")
        if self.at == len(self.turn_ids) - 1:
            self._resolve(self.asked)  # decided, but nothing went on from them yet
        if status in _UNENDED:
            meta = C.turn_metadata(status, code, turn.get("error_message"))
            self.fold.apply(C.message_metadata(meta))
        else:
            ending: list[Event] = [E.turn_error(code, turn.get("error_message"))] if code else []
            self._feed([*ending, E.turn_end(turn_id, E.turn_status(status))])
        self.translator = None

    def _resolve(self, calls: list[str]) -> None:
        """Feed the decisions on `calls` not fed yet."""
        for call in calls:
            run = self.runs.get(call) or {}
            if run.get("approval") is None or call in self.resolved:
                continue
            self.resolved.add(call)
            approved, name = run["approval"] == "approved", self.names.get(call, "")
            self._feed([E.approval_resolved(call, name, approved, run.get("reason"))])

    def _feed(self, events: list[Event]) -> None:
        if self.translator is None:
            self._next()
        assert self.translator is not None
        for kind, data in events:
            for chunk in self.translator.feed(kind, data):
                self.fold.apply(chunk)


class _Branch:
    """Folds a branch's rows into UIMessages, one assistant message per chain of turns."""

    def __init__(self, turns: list[dict[str, Any]], runs: dict[str, dict[str, Any]]) -> None:
        self.info = {t["id"]: t for t in turns}
        self.turns, self.runs = turns, runs
        self.chains: dict[str, list[str]] = {}
        for turn in turns:
            self.chains.setdefault(self.head(turn["id"]), []).append(turn["id"])
        self.out: list[UIMessage] = []
        self.chain: _Chain | None = None
        self.asked: str | None = None

    def head(self, turn_id: str) -> str:
        """The first turn of the chain of continuations `turn_id` belongs to."""
        seen = {turn_id}
        while (earlier := (self.info.get(turn_id) or {}).get("continues")) and earlier not in seen:
            seen.add(earlier)
            turn_id = earlier
        return turn_id

    def build(self, rows: Iterable[dict[str, Any]]) -> list[UIMessage]:
        for raw in rows:
            # Services read the rows as plain dicts of models.Message's columns.
            row = cast(StoredMessage, raw)
            if row["role"] == "user":
                if not stored.asks(row):
                    if self.chain is not None:
                        self.chain.results(row)
                    continue
                self._close()
                self.out.append(_user_message(row))
                self.asked = row["id"]
                continue
            head = self.head(str(row.get("turn_id") or ""))
            self.asked = None  # answered on this branch
            if self.chain is None or self.chain.head != head:
                self._close()
                self.chain = self._open(head)
            self.chain.assistant(row)
        self._close()
        return self.out

    def _open(self, head: str) -> _Chain:
        return _Chain(head, self.chains.get(head, [head]), self.info, self.runs)

    def _close(self) -> None:
        if self.chain is None and self.asked is not None:
            # A question nothing answered yet on the branch: its newest turn, still empty.
            asking = [
                t["id"]
                for t in self.turns
                if t.get("question_id") == self.asked and not t.get("continues")
            ]
            if asking:
                self.chain = self._open(asking[-1])
        if self.chain is not None:
            self.out.append(self.chain.close())
        self.chain, self.asked = None, None


def _user_message(row: StoredMessage) -> UIMessage:
    parts = [
        {"type": "text", "text": b.get("text", "")}
        for b in row["content"]
        if b.get("type") == "text"
    ]
    return {"id": row.get("client_id") or row["id"], "role": "user", "parts": parts}

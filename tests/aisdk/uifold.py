"""A Python port of the `ai` package's processUIMessageStream for the chunks we send.

It mirrors ai@7's src/ui/process-ui-message-stream.ts: the same parts, states and errors,
with JavaScript's `undefined` fields left out as JSON.stringify leaves them out. The node
tests check the real package against the server; this port lets hypothesis check millions.
"""

from __future__ import annotations

import copy
from typing import Any

Chunk = dict[str, Any]


class StreamError(AssertionError):
    """A chunk the real client would reject (UIMessageStreamError)."""


def _tool_parts(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [p for p in parts if p["type"].startswith("tool-") or p["type"] == "dynamic-tool"]


class UIFold:
    """Builds the assistant UIMessage from chunks, like readUIMessageStream({message})."""

    def __init__(self, message: dict[str, Any] | None = None) -> None:
        self.message = copy.deepcopy(message) if message else {"id": "", "role": "assistant"}
        self.message.setdefault("parts", [])
        self.active_text: dict[str, dict[str, Any]] = {}
        self.active_reasoning: dict[str, dict[str, Any]] = {}
        # Like createStreamingUIMessageState: input-streaming tools of the last step resume.
        self.partial_tools: dict[str, dict[str, Any]] = {
            p["toolCallId"]: {"text": p.get("rawInput", ""), "name": p["type"][5:]}
            for p in _tool_parts(self._step_parts())
            if p.get("state") == "input-streaming"
        }
        self.finish_reason: str | None = None
        self.errors: list[str] = []

    def _step_parts(self) -> list[dict[str, Any]]:
        parts = self.message["parts"]
        i = len(parts) - 1
        while i >= 0 and parts[i]["type"] != "step-start":
            i -= 1
        return parts[i + 1 :]

    def _tool(self, call_id: str) -> dict[str, Any]:
        for part in reversed(_tool_parts(self._step_parts())):
            if part["toolCallId"] == call_id:
                return part
        for part in reversed(_tool_parts(self.message["parts"])):
            if part["toolCallId"] == call_id:
                return part
        raise StreamError(f"No tool invocation found for tool call ID {call_id!r}")

    def _update_tool(self, call_id: str, name: str, fields: dict[str, Any]) -> None:
        part = next(
            (p for p in _tool_parts(self._step_parts()) if p["toolCallId"] == call_id), None
        )
        executed = fields.pop("providerExecuted", None)
        if part is None:
            part = {"type": f"tool-{name}", "toolCallId": call_id}
            self.message["parts"].append(part)
        else:
            for key in ("input", "output", "errorText", "rawInput", "preliminary"):
                part.pop(key, None)
            part["type"] = f"tool-{name}"
            executed = executed if executed is not None else part.get("providerExecuted")
        part.update({k: v for k, v in fields.items() if v is not _UNSET})
        if executed is not None:
            part["providerExecuted"] = executed

    def apply(self, chunk: Chunk) -> None:
        """Apply one chunk as the SDK does; raise StreamError where the SDK throws."""
        kind = chunk["type"]
        parts = self.message["parts"]
        if kind == "text-start":
            part = {"type": "text", "text": "", "state": "streaming"}
            self.active_text[chunk["id"]] = part
            parts.append(part)
        elif kind in ("text-delta", "text-end", "reasoning-delta", "reasoning-end"):
            active = self.active_text if kind.startswith("text") else self.active_reasoning
            part = active.get(chunk["id"])
            if part is None:
                raise StreamError(f"{kind} for missing part {chunk['id']!r}")
            if kind.endswith("delta"):
                part["text"] += chunk["delta"]
            else:
                part["state"] = "done"
                del active[chunk["id"]]
            if chunk.get("providerMetadata") is not None:
                part["providerMetadata"] = chunk["providerMetadata"]
        elif kind == "reasoning-start":
            part = {"type": "reasoning", "id": chunk["id"], "text": "", "state": "streaming"}
            if chunk.get("providerMetadata") is not None:
                part["providerMetadata"] = chunk["providerMetadata"]
            self.active_reasoning[chunk["id"]] = part
            parts.append(part)
        elif kind.startswith("tool-"):
            self._apply_tool(kind, chunk)
        elif kind == "start-step":
            parts.append({"type": "step-start"})
        elif kind == "reset-step":
            step = self._step_parts()
            self.active_text, self.active_reasoning, self.partial_tools = {}, {}, {}
            if step:
                del parts[len(parts) - len(step) :]
        elif kind == "start":
            if chunk.get("messageId") is not None:
                self.message["id"] = chunk["messageId"]
            self._merge_metadata(chunk.get("messageMetadata"))
        elif kind == "message-metadata":
            self._merge_metadata(chunk.get("messageMetadata"))
        elif kind == "finish":
            self.finish_reason = chunk.get("finishReason", self.finish_reason)
            self._merge_metadata(chunk.get("messageMetadata"))
        elif kind == "error":
            self.errors.append(chunk["errorText"])
        elif kind == "source-document":
            keys = ("type", "sourceId", "mediaType", "title", "filename", "providerMetadata")
            parts.append({k: chunk[k] for k in keys if chunk.get(k) is not None})
        elif kind.startswith("data-"):
            if not chunk.get("transient"):
                parts.append({k: v for k, v in chunk.items() if k != "transient"})
        elif kind not in ("finish-step", "abort"):
            raise StreamError(f"unexpected chunk type {kind!r}")

    def _apply_tool(self, kind: str, chunk: Chunk) -> None:
        if kind == "tool-approval-response":
            found = [
                p
                for p in _tool_parts(self.message["parts"])
                if (p.get("approval") or {}).get("id") == chunk["approvalId"]
            ]
            if not found:
                raise StreamError(f"No tool invocation found for approval {chunk['approvalId']!r}")
            approval = {**found[0]["approval"], "approved": chunk["approved"]}
            if chunk.get("reason") is not None:
                approval["reason"] = chunk["reason"]
            found[0].update(state="approval-responded", approval=approval)
            return
        call_id = chunk["toolCallId"]
        executed = chunk.get("providerExecuted")
        if kind == "tool-input-start":
            self.partial_tools[call_id] = {"text": "", "name": chunk["toolName"]}
            fields = {"state": "input-streaming", "providerExecuted": executed}
            self._update_tool(call_id, chunk["toolName"], fields)
        elif kind == "tool-input-delta":
            partial = self.partial_tools.get(call_id)
            if partial is None:
                raise StreamError(f"tool-input-delta for missing tool call {call_id!r}")
            partial["text"] += chunk["inputTextDelta"]
            fields = {"state": "input-streaming", "input": _PARTIAL, "rawInput": partial["text"]}
            self._update_tool(call_id, partial["name"], fields)
        elif kind == "tool-input-available":
            fields = {"state": "input-available", "input": chunk["input"]}
            self._update_tool(call_id, chunk["toolName"], {**fields, "providerExecuted": executed})
        elif kind == "tool-input-error":
            fields = {"state": "output-error", "input": chunk["input"]}
            fields["errorText"] = chunk["errorText"]
            self._update_tool(call_id, chunk["toolName"], {**fields, "providerExecuted": executed})
        elif kind == "tool-approval-request":
            approval = {"id": chunk["approvalId"]}
            if chunk.get("approvalDescriptor") is not None:
                approval["descriptor"] = chunk["approvalDescriptor"]
            self._tool(call_id).update(state="approval-requested", approval=approval)
        elif kind == "tool-output-denied":
            self._tool(call_id)["state"] = "output-denied"
        elif kind in ("tool-output-available", "tool-output-error"):
            part = self._tool(call_id)
            # The SDK keeps rawInput on an output error and clears it otherwise.
            dropped = ("output", "errorText", "preliminary")
            for key in dropped if kind == "tool-output-error" else (*dropped, "rawInput"):
                part.pop(key, None)
            if kind == "tool-output-available":
                part.update(state="output-available", output=chunk["output"])
            else:
                part.update(state="output-error", errorText=chunk["errorText"])
            if executed is not None:
                part["providerExecuted"] = executed
        else:
            raise StreamError(f"unexpected chunk type {kind!r}")

    def _merge_metadata(self, meta: Any) -> None:
        if meta is None:
            return
        current = self.message.get("metadata")
        self.message["metadata"] = _merge(current, meta) if current is not None else meta


_UNSET = object()
# Partial tool input is parsed by the SDK's partial-JSON repair; we never compare it.
_PARTIAL = "<partial input>"


def _merge(base: Any, extra: Any) -> Any:
    if not isinstance(base, dict) or not isinstance(extra, dict):
        return extra
    out = dict(base)
    for key, value in extra.items():
        out[key] = _merge(out.get(key), value) if isinstance(value, dict) else value
    return out


def fold(chunks: list[Chunk], message: dict[str, Any] | None = None) -> UIFold:
    """Apply `chunks` to `message` (or a new one) and return the fold."""
    state = UIFold(message)
    for chunk in chunks:
        state.apply(chunk)
    return state


def check_well_formed(chunks: list[Chunk], resumed_steps: int | None = None) -> None:
    """Assert the stream rules a UI message stream producer must keep."""
    kinds = [c["type"] for c in chunks]
    if resumed_steps is None:
        assert kinds[:1] == ["start"], kinds[:3]
    elif resumed_steps:
        assert kinds[:1] == ["reset-step"], kinds[:3]
    assert kinds.count("start") <= (0 if resumed_steps is not None else 1)
    assert kinds and kinds[-1] in ("finish", "abort"), kinds[-3:]
    assert kinds.count("finish") + kinds.count("abort") == 1
    step = bool(resumed_steps)
    open_parts: set[str] = set()
    streaming_tools: set[str] = set()
    for chunk in chunks:
        kind = chunk["type"]
        if kind == "start-step":
            assert not step and not open_parts and not streaming_tools
            step = True
        elif kind == "finish-step":
            assert step and not open_parts and not streaming_tools
            step = False
        elif kind == "reset-step":
            assert step
            open_parts, streaming_tools = set(), set()
        elif kind in ("text-start", "reasoning-start"):
            assert step and chunk["id"] not in open_parts
            open_parts.add(chunk["id"])
        elif kind in ("text-delta", "reasoning-delta"):
            assert chunk["id"] in open_parts and chunk["delta"]
        elif kind in ("text-end", "reasoning-end"):
            open_parts.remove(chunk["id"])
        elif kind == "tool-input-start":
            assert step and chunk["toolCallId"] not in streaming_tools
            streaming_tools.add(chunk["toolCallId"])
        elif kind == "tool-input-delta":
            assert chunk["toolCallId"] in streaming_tools
        elif kind in ("tool-input-available", "tool-input-error"):
            streaming_tools.remove(chunk["toolCallId"])
        elif kind in ("finish", "abort", "error", "message-metadata"):
            assert not step and not open_parts and not streaming_tools, kind

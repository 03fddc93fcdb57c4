"""The AI SDK's UI message stream chunks we send, typed, and the rules their values follow.

One TypedDict per chunk, with the camelCase keys the wire has (as pydantic-ai's
`ui/vercel_ai/response_types.py` types them), built through the small constructors below so
the keys are written once. Pure; `streaming/aisdk/ui_stream.py` decides which chunk to send when.
"""

# No `from __future__ import annotations`: NotRequired must be read from evaluated annotations.
import json
from typing import Any, Literal, NotRequired, TypedDict

from streaming.wire.events import ContextTrimmed

Json = dict[str, Any]
CUT_OFF = "The tool call was cut off before its input was complete; it was not run."
# What a cited record is, to the SDK: the JSON the source's URL answers (docs/api.md).
SOURCE_MEDIA_TYPE = "application/json"
_ERROR_FINISH = {
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content-filter",
}
_STATUS_FINISH = {
    "completed": "stop",
    "max_rounds": "tool-calls",
    "awaiting_approval": "tool-calls",
    "interrupted": "interrupted",
}


class ErrorMetadata(TypedDict):
    """Why a turn failed, as its message's metadata says."""

    code: str
    message: str


class Metadata(TypedDict):
    """An assistant UIMessage's metadata: its turn's status (and error)."""

    status: str
    error: NotRequired[ErrorMetadata]


class StartChunk(TypedDict):
    type: Literal["start"]
    messageId: str | None
    messageMetadata: Metadata


class StartStepChunk(TypedDict):
    type: Literal["start-step"]


class FinishStepChunk(TypedDict):
    type: Literal["finish-step"]


class ResetStepChunk(TypedDict):
    type: Literal["reset-step"]


class TextStartChunk(TypedDict):
    type: Literal["text-start"]
    id: str


class TextDeltaChunk(TypedDict):
    type: Literal["text-delta"]
    id: str
    delta: str


class TextEndChunk(TypedDict):
    type: Literal["text-end"]
    id: str


class ReasoningStartChunk(TypedDict):
    type: Literal["reasoning-start"]
    id: str
    providerMetadata: NotRequired[Json]


class ReasoningDeltaChunk(TypedDict):
    type: Literal["reasoning-delta"]
    id: str
    delta: str


class ReasoningEndChunk(TypedDict):
    type: Literal["reasoning-end"]
    id: str
    providerMetadata: NotRequired[Json]


class ToolInputStartChunk(TypedDict):
    type: Literal["tool-input-start"]
    toolCallId: str
    toolName: str
    providerExecuted: NotRequired[bool]


class ToolInputDeltaChunk(TypedDict):
    type: Literal["tool-input-delta"]
    toolCallId: str
    inputTextDelta: str


class ToolInputAvailableChunk(TypedDict):
    type: Literal["tool-input-available"]
    toolCallId: str
    toolName: str
    providerExecuted: NotRequired[bool]
    input: Any


class ToolInputErrorChunk(TypedDict):
    type: Literal["tool-input-error"]
    toolCallId: str
    toolName: str
    providerExecuted: NotRequired[bool]
    input: None
    errorText: str


class ToolOutputAvailableChunk(TypedDict):
    type: Literal["tool-output-available"]
    toolCallId: str
    output: Any
    providerExecuted: NotRequired[bool]


class ToolOutputErrorChunk(TypedDict):
    type: Literal["tool-output-error"]
    toolCallId: str
    errorText: str


class ToolOutputDeniedChunk(TypedDict):
    type: Literal["tool-output-denied"]
    toolCallId: str


class ToolApprovalRequestChunk(TypedDict):
    type: Literal["tool-approval-request"]
    approvalId: str
    toolCallId: str
    approvalDescriptor: Json | None


class ToolApprovalResponseChunk(TypedDict):
    type: Literal["tool-approval-response"]
    approvalId: str
    approved: bool
    reason: NotRequired[str]


class SourceDocumentChunk(TypedDict):
    type: Literal["source-document"]
    sourceId: str
    mediaType: str
    title: str


class ContextTrimmedChunk(TypedDict):
    type: Literal["data-context-trimmed"]
    data: ContextTrimmed
    transient: bool


class ChartChunk(TypedDict):
    type: Literal["data-chart"]
    id: str
    data: Json


class MessageMetadataChunk(TypedDict):
    type: Literal["message-metadata"]
    messageMetadata: Metadata


class ErrorChunk(TypedDict):
    type: Literal["error"]
    errorText: str


class AbortChunk(TypedDict):
    type: Literal["abort"]
    reason: str


class FinishChunk(TypedDict):
    type: Literal["finish"]
    finishReason: str


UIChunk = (
    StartChunk
    | StartStepChunk
    | FinishStepChunk
    | ResetStepChunk
    | TextStartChunk
    | TextDeltaChunk
    | TextEndChunk
    | ReasoningStartChunk
    | ReasoningDeltaChunk
    | ReasoningEndChunk
    | ToolInputStartChunk
    | ToolInputDeltaChunk
    | ToolInputAvailableChunk
    | ToolInputErrorChunk
    | ToolOutputAvailableChunk
    | ToolOutputErrorChunk
    | ToolOutputDeniedChunk
    | ToolApprovalRequestChunk
    | ToolApprovalResponseChunk
    | SourceDocumentChunk
    | ContextTrimmedChunk
    | ChartChunk
    | MessageMetadataChunk
    | ErrorChunk
    | AbortChunk
    | FinishChunk
)

START_STEP: StartStepChunk = {"type": "start-step"}
FINISH_STEP: FinishStepChunk = {"type": "finish-step"}
RESET_STEP: ResetStepChunk = {"type": "reset-step"}


def start(message_id: str | None, metadata: Metadata) -> StartChunk:
    """The message begins (its id, and its metadata so far)."""
    return {"type": "start", "messageId": message_id, "messageMetadata": metadata}


def text_start(part_id: str) -> TextStartChunk:
    """A text part begins."""
    return {"type": "text-start", "id": part_id}


def text_delta(part_id: str, delta: str) -> TextDeltaChunk:
    """A piece of a text part."""
    return {"type": "text-delta", "id": part_id, "delta": delta}


def text_end(part_id: str) -> TextEndChunk:
    """A text part ends."""
    return {"type": "text-end", "id": part_id}


def reasoning_start(part_id: str, meta: Json | None) -> ReasoningStartChunk:
    """A reasoning part begins (a redacted one carries its data in `meta`)."""
    chunk: ReasoningStartChunk = {"type": "reasoning-start", "id": part_id}
    if meta:
        chunk["providerMetadata"] = meta
    return chunk


def reasoning_delta(part_id: str, delta: str) -> ReasoningDeltaChunk:
    """A piece of a reasoning part."""
    return {"type": "reasoning-delta", "id": part_id, "delta": delta}


def reasoning_end(part_id: str, meta: Json | None) -> ReasoningEndChunk:
    """A reasoning part ends (with its signature in `meta`)."""
    chunk: ReasoningEndChunk = {"type": "reasoning-end", "id": part_id}
    if meta:
        chunk["providerMetadata"] = meta
    return chunk


def tool_input_start(call_id: str, name: str, provider: bool) -> ToolInputStartChunk:
    """A tool call begins."""
    chunk: ToolInputStartChunk = {
        "type": "tool-input-start",
        "toolCallId": call_id,
        "toolName": name,
    }
    if provider:
        chunk["providerExecuted"] = True
    return chunk


def tool_input_delta(call_id: str, fragment: str) -> ToolInputDeltaChunk:
    """A piece of a tool call's input, as the model wrote it."""
    return {"type": "tool-input-delta", "toolCallId": call_id, "inputTextDelta": fragment}


def tool_input_available(
    call_id: str, name: str, provider: bool, tool_input: Any
) -> ToolInputAvailableChunk:
    """A tool call's whole input."""
    kind: Literal["tool-input-available"] = "tool-input-available"
    if provider:
        return {
            "type": kind,
            "toolCallId": call_id,
            "toolName": name,
            "providerExecuted": True,
            "input": tool_input,
        }
    return {"type": kind, "toolCallId": call_id, "toolName": name, "input": tool_input}


def tool_input_error(call_id: str, name: str, provider: bool, text: str) -> ToolInputErrorChunk:
    """A tool call whose input is unusable (it was cut off): never run."""
    kind: Literal["tool-input-error"] = "tool-input-error"
    if provider:
        return {
            "type": kind,
            "toolCallId": call_id,
            "toolName": name,
            "providerExecuted": True,
            "input": None,
            "errorText": text,
        }
    return {"type": kind, "toolCallId": call_id, "toolName": name, "input": None, "errorText": text}


def tool_output_available(call_id: str, output: Any, provider: bool) -> ToolOutputAvailableChunk:
    """A tool call's output."""
    chunk: ToolOutputAvailableChunk = {
        "type": "tool-output-available",
        "toolCallId": call_id,
        "output": output,
    }
    if provider:
        chunk["providerExecuted"] = True
    return chunk


def tool_output_error(call_id: str, text: str) -> ToolOutputErrorChunk:
    """A tool call that failed."""
    return {"type": "tool-output-error", "toolCallId": call_id, "errorText": text}


def tool_output_denied(call_id: str) -> ToolOutputDeniedChunk:
    """A tool call the user declined."""
    return {"type": "tool-output-denied", "toolCallId": call_id}


def tool_approval_request(call_id: str, descriptor: Json | None) -> ToolApprovalRequestChunk:
    """A tool call waits for the user's approval."""
    return {
        "type": "tool-approval-request",
        "approvalId": call_id,
        "toolCallId": call_id,
        "approvalDescriptor": descriptor,
    }


def tool_approval_response(
    call_id: str, approved: bool, reason: str | None = None
) -> ToolApprovalResponseChunk:
    """How the user decided a call (`reason`: only in the stored view)."""
    chunk: ToolApprovalResponseChunk = {
        "type": "tool-approval-response",
        "approvalId": call_id,
        "approved": approved,
    }
    if reason is not None:
        chunk["reason"] = reason
    return chunk


def context_trimmed(data: ContextTrimmed) -> ContextTrimmedChunk:
    """The model sees less of the conversation from now on."""
    # Transient: useChat hands it to onData and keeps it out of the message's parts.
    return {"type": "data-context-trimmed", "data": data, "transient": True}


def charts(call_id: str, output: Any) -> list[ChartChunk]:
    """Return a `data-chart` part per Vega-Lite spec a `chart` tool's output carries."""
    found = output.get("charts") if isinstance(output, dict) else None
    specs = [
        s for s in found or [] if isinstance(s, dict) and "vega-lite" in str(s.get("$schema", ""))
    ]
    return [
        {"type": "data-chart", "id": f"{call_id}-chart-{i}", "data": spec}
        for i, spec in enumerate(specs)
    ]


def message_metadata(metadata: Metadata) -> MessageMetadataChunk:
    """The message's metadata."""
    return {"type": "message-metadata", "messageMetadata": metadata}


def error(text: str) -> ErrorChunk:
    """An error the client shows; useChat stops reading at it."""
    return {"type": "error", "errorText": text}


def abort(reason: str) -> AbortChunk:
    """The message was stopped."""
    return {"type": "abort", "reason": reason}


def finish(reason: str) -> FinishChunk:
    """The message ends."""
    return {"type": "finish", "finishReason": reason}


def finish_reason(status: str, code: str | None) -> str:
    """Return the AI SDK finish reason for a turn that ended with `status` and error `code`."""
    if status == "failed":
        return _ERROR_FINISH.get(code or "", "error")
    if status == "completed" and code == "refusal":
        return "content-filter"
    return _STATUS_FINISH.get(status, "other")


def turn_metadata(status: str, code: str | None, message: str | None) -> Metadata:
    """Return the assistant message's metadata: its turn's status, and its error if it failed."""
    meta: Metadata = {"status": status}
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


def source_documents(citations: Any) -> list[SourceDocumentChunk]:
    """Return a `source-document` chunk per distinct source `citations` name, in cited order."""
    out: list[SourceDocumentChunk] = []
    seen: set[str] = set()
    for citation in citations if isinstance(citations, list) else []:
        source = citation.get("source") if isinstance(citation, dict) else None
        if not isinstance(source, str) or source in seen:
            continue
        seen.add(source)
        title = citation.get("title")
        out.append(
            {
                "type": "source-document",
                "sourceId": source,
                "mediaType": SOURCE_MEDIA_TYPE,
                "title": title if isinstance(title, str) else source,
            }
        )
    return out

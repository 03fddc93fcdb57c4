"""Build assistant messages from raw Anthropic Messages API stream events."""

from __future__ import annotations

import json
from bisect import bisect_left
from typing import Any

from streaming.messages.effects import (
    BlockDelta,
    BlockStarted,
    BlockStopped,
    Change,
    MessageDelta,
    MessageStarted,
    MessageStopped,
    StreamError,
    UnknownEvent,
)

__all__ = ["MessageAccumulator"]

_FIRST_KEYS = ("id", "type", "role", "model", "content", "stop_reason", "stop_sequence", "usage")
# Fragments joined into one string at a time: a long answer then holds a few long strings,
# not thousands of short ones (each about 50 bytes of object header), and every character is
# copied twice at most (once folded, once joined).
FOLD = 64


class _Pieces:
    """A string arriving in fragments, kept as folded chunks and a short tail."""

    __slots__ = ("chunks", "tail")

    def __init__(self, *pieces: str) -> None:
        self.chunks: list[str] = []
        self.tail: list[str] = list(pieces)

    def add(self, piece: str) -> None:
        """Append one fragment."""
        tail = self.tail
        tail.append(piece)
        if len(tail) >= FOLD:
            self.chunks.append("".join(tail))
            tail.clear()

    def join(self) -> str:
        """The whole string so far."""
        if not self.chunks:
            return "".join(self.tail)
        return "".join(self.chunks) + "".join(self.tail)


class _OpenBlock:
    """A started, not yet stopped block: string fields kept as fragment lists until stop."""

    __slots__ = ("block", "frags", "json_parts", "owns_citations")

    def __init__(self, block: dict[str, Any]) -> None:
        self.block = dict(block)
        self.frags: dict[str, _Pieces] = {}
        self.json_parts: _Pieces | None = None
        self.owns_citations = False

    def add(self, key: str, value: Any) -> None:
        """Concatenate `value` onto a str field, or set the field if either side is not a str."""
        parts = self.frags.get(key)
        if parts is not None:
            if isinstance(value, str):
                parts.add(value)
                return
            del self.frags[key]
        elif isinstance(value, str) and isinstance(self.block.get(key), str):
            self.frags[key] = _Pieces(self.block[key], value)
            return
        self.block[key] = value

    def apply(self, delta: dict[str, Any]) -> None:
        """Apply one upstream delta object."""
        kind = delta.get("type")
        if kind == "text_delta":
            self.add("text", delta.get("text", ""))
        elif kind == "input_json_delta":
            fragment = delta.get("partial_json", "")
            if self.json_parts is None:
                self.json_parts = _Pieces()
            if isinstance(fragment, bytes):
                fragment = fragment.decode("utf-8", "replace")
            self.json_parts.add(fragment if isinstance(fragment, str) else "")
        elif kind == "thinking_delta":
            self.add("thinking", delta.get("thinking", ""))
        elif kind == "signature_delta":
            self.frags.pop("signature", None)
            self.block["signature"] = delta.get("signature", "")
        elif kind == "citations_delta":
            if not self.owns_citations:
                # Copy once: the started dict may share its list with the upstream event.
                existing = self.block.get("citations")
                self.block["citations"] = list(existing) if isinstance(existing, list) else []
                self.owns_citations = True
            self.block["citations"].append(delta.get("citation"))
        else:
            for key, value in delta.items():
                if key != "type":
                    self.add(key, value)

    def finish(self) -> tuple[dict[str, Any], str | None, str | None]:
        """Join fragments and parse tool input once; return the block, any error, its raw input."""
        block = self.block
        for key, parts in self.frags.items():
            block[key] = parts.join()
        self.frags = {}
        if self.json_parts is None:
            return block, None, None
        raw = self.json_parts.join()
        if not raw.strip():
            if not isinstance(block.get("input"), dict):
                block["input"] = {}
            return block, None, None
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            # {} keeps the history valid; the raw text goes to whoever answers the call.
            block["input"] = {}
            return block, f"tool input was not valid JSON: {exc}", raw
        if not isinstance(value, dict):
            block["input"] = {}
            return block, f"tool input was not a JSON object: got {type(value).__name__}", raw
        block["input"] = value
        return block, None, None

    def snapshot(self) -> dict[str, Any]:
        """Return a copy with fragments joined and raw tool JSON under `partial_json`."""
        snap = dict(self.block)
        for key, parts in self.frags.items():
            snap[key] = parts.join()
        if self.json_parts is not None:
            snap["partial_json"] = self.json_parts.join()
        return snap


class MessageAccumulator:
    """Pure accumulator of Anthropic stream events into the assistant message."""

    __slots__ = (
        "_base",
        "_content",
        "_done_keys",
        "_error",
        "_open",
        "_started",
        "_stopped",
        "_usage",
    )

    def __init__(self) -> None:
        """Create an empty accumulator."""
        self._base: dict[str, Any] = {}
        self._usage: dict[str, Any] = {}
        self._open: dict[int, _OpenBlock] = {}
        # Finished blocks kept sorted by index so message() is a cheap list copy.
        self._done_keys: list[int] = []
        self._content: list[dict[str, Any]] = []
        self._started = False
        self._stopped = False
        self._error: dict[str, Any] | None = None

    def feed(self, event: dict[str, Any]) -> list[Change]:
        """Apply one raw stream event and return what changed."""
        kind = event.get("type")
        if kind == "content_block_delta":
            index = event.get("index")
            delta = event.get("delta")
            if type(index) is not int or not isinstance(delta, dict):
                return [UnknownEvent(event)]
            block = self._open.get(index)
            if block is None:
                return [UnknownEvent(event)]
            block.apply(delta)
            return [BlockDelta(index, delta)]
        if kind == "ping":
            return []
        if kind == "content_block_start":
            return self._on_block_start(event)
        if kind == "content_block_stop":
            return self._on_block_stop(event)
        if kind == "message_start":
            return self._on_message_start(event)
        if kind == "message_delta":
            return self._on_message_delta(event)
        if kind == "message_stop":
            self._stopped = True
            return [MessageStopped()]
        if kind == "error":
            error = event.get("error")
            if not isinstance(error, dict):
                error = {"type": "error", "message": str(error)}
            self._error = error
            return [StreamError(self._error)]
        return [UnknownEvent(event)]

    def _on_message_start(self, event: dict[str, Any]) -> list[Change]:
        message = event.get("message")
        if not isinstance(message, dict):
            return [UnknownEvent(event)]
        # A repeated message_start begins a new message: no block may leak across.
        self._base = dict(message)
        self._base.pop("content", None)
        usage = self._base.pop("usage", None)
        self._usage = dict(usage) if isinstance(usage, dict) else {}
        self._open = {}
        self._done_keys = []
        self._content = []
        self._started = True
        self._stopped = False
        return [MessageStarted(message)]

    def _on_block_start(self, event: dict[str, Any]) -> list[Change]:
        index = event.get("index")
        block = event.get("content_block")
        if type(index) is not int or not isinstance(block, dict):
            return [UnknownEvent(event)]
        pos = bisect_left(self._done_keys, index)
        if pos < len(self._done_keys) and self._done_keys[pos] == index:
            # A restarted index replaces the earlier block rather than duplicating it.
            del self._done_keys[pos]
            del self._content[pos]
        self._open[index] = _OpenBlock(block)
        return [BlockStarted(index, block)]

    def _on_block_stop(self, event: dict[str, Any]) -> list[Change]:
        index = event.get("index")
        if type(index) is not int:
            return [UnknownEvent(event)]
        open_block = self._open.pop(index, None)
        if open_block is None:
            return [UnknownEvent(event)]
        block, error, raw = open_block.finish()
        keys = self._done_keys
        if not keys or index > keys[-1]:
            keys.append(index)
            self._content.append(block)
        else:
            pos = bisect_left(keys, index)
            keys.insert(pos, index)
            self._content.insert(pos, block)
        return [BlockStopped(index, block, error, raw)]

    def _on_message_delta(self, event: dict[str, Any]) -> list[Change]:
        delta = event.get("delta")
        if not isinstance(delta, dict):
            delta = {}
        for key, value in delta.items():
            # A null container means "nothing new", not "container gone" (as the SDK does).
            if key != "type" and not (key == "container" and value is None):
                self._base[key] = value
        management = event.get("context_management")
        if isinstance(management, dict):
            # What context editing cleared for this reply (applied_edits): kept with it.
            self._base["context_management"] = management
        usage = event.get("usage")
        if isinstance(usage, dict):
            # message_delta usage holds cumulative totals; absent or null keeps the earlier value.
            for key, value in usage.items():
                if value is not None:
                    self._usage[key] = value
        return [
            MessageDelta(
                self._base.get("stop_reason"),
                self._base.get("stop_sequence"),
                dict(self._usage),
                delta,
            )
        ]

    def message(self) -> dict[str, Any]:
        """Return the message in Anthropic format with only stopped blocks, ordered by index."""
        base = self._base
        message: dict[str, Any] = {
            "id": base.get("id"),
            "type": base.get("type", "message"),
            "role": base.get("role", "assistant"),
            "model": base.get("model"),
            "content": list(self._content),
            "stop_reason": base.get("stop_reason"),
            "stop_sequence": base.get("stop_sequence"),
            "usage": dict(self._usage),
        }
        for key, value in base.items():
            if key not in _FIRST_KEYS:
                message[key] = value
        return message

    def set_field(self, index: int, key: str, value: Any) -> None:
        """Override a field of an open block (e.g. a tool id the server must make unique)."""
        self._open[index].block[key] = value

    def incomplete_blocks(self) -> list[tuple[int, dict[str, Any]]]:
        """Return (index, partial snapshot) for blocks started but never stopped."""
        return [(index, self._open[index].snapshot()) for index in sorted(self._open)]

    @property
    def started(self) -> bool:
        """Whether a message_start has been seen."""
        return self._started

    @property
    def stopped(self) -> bool:
        """Whether message_stop has been seen for the current message."""
        return self._stopped

    @property
    def stop_reason(self) -> str | None:
        """The stop_reason from the latest message_delta, if any."""
        return self._base.get("stop_reason")

    @property
    def usage(self) -> dict[str, Any]:
        """A copy of the merged usage so far."""
        return dict(self._usage)

    @property
    def error(self) -> dict[str, Any] | None:
        """The error object of the last upstream `error` event, if any."""
        return self._error

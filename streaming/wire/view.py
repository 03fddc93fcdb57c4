"""What a client shows after reading a turn's events: the protocol state, rebuilt purely.

A worker taking over a turn compares this with the stored rows to send exactly what
clients are missing; tests use it to check that a stream reassembles into the answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from streaming.wire import events as E
from streaming.wire import protocol as P


@dataclass
class MessageView:
    """One message as shown: its open blocks (id -> type), text so far, and how it ended."""

    open_blocks: dict[str, str] = field(default_factory=dict)
    text: dict[str, str] = field(default_factory=dict)
    ended: bool = False
    discarded: bool = False


@dataclass
class TurnView:
    """The state a client reaches by applying a turn's events in order."""

    last_seq: int = 0
    started: bool = False
    status: str | None = None
    messages: dict[str, MessageView] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    tool_results: set[str] = field(default_factory=set)
    approvals_requested: set[str] = field(default_factory=set)
    errors: list[tuple[str, str]] = field(default_factory=list)

    def apply(self, seq: int, kind: str, data: Mapping[str, Any]) -> None:
        """Apply one event as a client would."""
        self.last_seq = max(self.last_seq, seq)
        if kind == E.TURN_START:
            self.started = True
            if data.get("reset"):
                self.messages, self.order = {}, []
                self.tool_results, self.errors = set(), []
                self.approvals_requested = set()
        elif kind == E.MESSAGE_START:
            message_id = data["message_id"]
            # A message sent again in full (after a discard) replaces what was shown.
            self.messages[message_id] = MessageView()
            if message_id in self.order:
                self.order.remove(message_id)
            self.order.append(message_id)
        elif kind == E.BLOCK_START:
            message = self.messages.get(data["message_id"])
            if message is not None:
                message.open_blocks[data["block_id"]] = str(data.get("type"))
        elif kind == E.BLOCK_DELTA:
            message = self.messages.get(data["message_id"])
            text = data.get("delta", {}).get("text")
            if message is not None and isinstance(text, str):
                block_id = data["block_id"]
                message.text[block_id] = message.text.get(block_id, "") + text
        elif kind == E.BLOCK_END:
            message = self.messages.get(data["message_id"])
            if message is not None:
                message.open_blocks.pop(data["block_id"], None)
        elif kind == E.MESSAGE_END:
            if data["message_id"] in self.messages:
                self.messages[data["message_id"]].ended = True
        elif kind == E.MESSAGE_DISCARDED:
            message = self.messages.get(data["message_id"])
            if message is not None:
                message.discarded, message.open_blocks = True, {}
        elif kind == E.TOOL_RESULT:
            self.tool_results.add(data["tool_use_id"])
        elif kind == E.APPROVAL_REQUESTED:
            self.approvals_requested.add(data["tool_use_id"])
        elif kind == E.ERROR:
            self.errors.append((str(data.get("code")), str(data.get("message"))))
        elif kind == E.TURN_END:
            self.status = data.get("status")

    def shown_text(self) -> str:
        """The text of every message still shown, in order (what the user reads)."""
        return "".join(
            "".join(self.messages[m].text.values())
            for m in self.order
            if not self.messages[m].discarded
        )


def view_of(raw: bytes) -> TurnView:
    """Build the view of an encoded event stream (whole frames only)."""
    view = TurnView()
    for seq, kind, data in P.decode_stream(raw):
        view.apply(seq, kind, data)
    return view

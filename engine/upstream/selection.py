"""What part of a long history a request sends: whole turns, trimmed in big steps (pure).

A turn starts at a user message that holds a question (anything but tool results). After a
turn that failed or was cancelled with tool results stored, repair merges those results and
the next question into one message: when the turns before it are left out, its results go
with them. So leaving out turns never splits a tool exchange and never keeps a thinking
block without its turn. Older
turns are reduced in two stages, oldest first: their bulky tool results become a one-line
note (the exchange stays), then whole turns are left out. The current turn is always sent.

The trim point is a pure function of the history, found by replaying it: at every request
the history has made (each user message, and a trailing assistant message), if what is kept
no longer fits the room, trim until it fills at most LOW of it. A history only grows, so
the replay reaches the same trim point on every later call: it moves only once the room is
full again, and every call in between sends the same prefix, which the prompt cache reads.

The replay also says which kept messages were answered under an earlier trim point (`stale`):
they were written for a conversation that started elsewhere, so their thinking blocks (and
citations, numbered over that request's search results) no longer hold and are not sent
back (engine/upstream/conversation.py). Messages answered since hold as long as the trim
point does, so every call until the next step sends them exactly as returned.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from engine.upstream.estimate import message_tokens

__all__ = ["BULKY_BYTES", "LOW", "Cut", "Plan", "elide", "plan", "turn_starts"]

Message = dict[str, Any]

# After a trim step the kept messages fill at most this share of the room, so the trim
# point holds while the conversation grows by the rest.
LOW = 0.6
# Tool results longer than this (JSON bytes of their content) become a note when elided.
BULKY_BYTES = 1024
NOTE = "[result of {name} omitted to fit the context window: {size} bytes]"


@dataclass(frozen=True)
class Cut:
    """A trim point: turns before `dropped` are left out, turns before `elided` are noted."""

    dropped: int = 0
    elided: int = 0


@dataclass(frozen=True)
class Plan:
    """What one request sends of a history, and how that differs from the whole."""

    messages: list[Message]
    tokens: int
    cut: Cut
    previous: Cut
    first_kept: int
    elided_results: int
    previous_elided: int
    squeezed: bool
    # How many of `messages` (from the first) were answered under an earlier trim point.
    stale: int = 0

    @property
    def omitted_messages(self) -> int:
        """Messages before the first one sent."""
        return self.first_kept

    @property
    def omitted_turns(self) -> int:
        """Whole turns left out."""
        return self.cut.dropped

    @property
    def changed(self) -> bool:
        """True when this request leaves out more than the one before it."""
        return (self.cut.dropped, self.elided_results) != (
            self.previous.dropped,
            self.previous_elided,
        )


def turn_starts(history: list[Message]) -> list[int]:
    """Return the index of each turn's first message; the first is always 0."""
    return [i for i, message in enumerate(history) if i == 0 or _opens_turn(message)]


def _opens_turn(message: Message) -> bool:
    if message.get("role") != "user":
        return False
    content = message.get("content")
    return not isinstance(content, list) or any(not _is_result(block) for block in content)


def _is_result(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") == "tool_result"


def _opening(message: Message) -> Message:
    """The turn's first message as sent when the turns before it are left out."""
    content = message.get("content")
    if not isinstance(content, list) or not any(_is_result(b) for b in content):
        return message
    return {**message, "content": [b for b in content if not _is_result(b)]}


def elide(message: Message, names: dict[str, str]) -> tuple[Message, int]:
    """Return `message` with its bulky tool results as notes, and how many were replaced."""
    content = message.get("content")
    if message.get("role") != "user" or not isinstance(content, list):
        return message, 0
    out, replaced = [], 0
    for block in content:
        if isinstance(block, dict) and block.get("type") == "tool_result":
            size = len(json.dumps(block.get("content"), separators=(",", ":"), ensure_ascii=False))
            if size > BULKY_BYTES:
                name = names.get(str(block.get("tool_use_id")), "a tool")
                note: Message = {
                    "type": "tool_result",
                    "tool_use_id": block.get("tool_use_id"),
                    "content": NOTE.format(name=name, size=size),
                }
                if block.get("is_error"):
                    note["is_error"] = True
                out.append(note)
                replaced += 1
                continue
        out.append(block)
    return ({**message, "content": out}, replaced) if replaced else (message, 0)


class _Sizes:
    """Prefix sums of each message's estimate, whole and with bulky results elided."""

    def __init__(self, history: list[Message]) -> None:
        names = {
            str(block.get("id")): str(block.get("name"))
            for message in history
            if message.get("role") == "assistant" and isinstance(message.get("content"), list)
            for block in message["content"]
            if isinstance(block, dict) and block.get("type") == "tool_use"
        }
        self.starts = turn_starts(history)
        # A turn's first message without the results of the turn before (see _opening).
        self.heads = {i: _opening(history[i]) for i in self.starts}
        self.head_sizes = {i: message_tokens(m) for i, m in self.heads.items()}
        self.turn_of: list[int] = []
        self.lean: list[Message] = []
        self.notes: list[int] = []
        full, lean = [0], [0]
        turn = -1
        for i, message in enumerate(history):
            if turn + 1 < len(self.starts) and self.starts[turn + 1] == i:
                turn += 1
            self.turn_of.append(turn)
            short, replaced = elide(message, names)
            size = message_tokens(message)
            full.append(full[-1] + size)
            lean.append(lean[-1] + (message_tokens(short) if replaced else size))
            self.lean.append(short)
            self.notes.append(replaced)
        self.full, self.leaned = full, lean

    def size(self, cut: Cut, last: int) -> int:
        """Estimated tokens of messages up to `last` (inclusive) kept under `cut`."""
        drop, elide_to = self.starts[cut.dropped], self.starts[cut.elided]
        elided = self.leaned[elide_to] - self.leaned[drop]
        size = elided + self.full[last + 1] - self.full[elide_to]
        if cut.dropped:
            sums = self.leaned if drop < elide_to else self.full
            size += self.head_sizes[drop] - (sums[drop + 1] - sums[drop])
        return size

    def elided_results(self, cut: Cut) -> int:
        """Tool results replaced by notes under `cut`."""
        return sum(self.notes[self.starts[cut.dropped] : self.starts[cut.elided]])


def _step(sizes: _Sizes, cut: Cut, last: int, target: float, elide: bool) -> Cut:
    """Trim the least that brings messages up to `last` within `target`: notes first."""
    current = sizes.turn_of[last]
    for elided in range(cut.elided + 1, current + 1) if elide else ():
        candidate = Cut(cut.dropped, elided)
        if sizes.size(candidate, last) <= target:
            return candidate
    for dropped in range(cut.dropped + 1, current + 1):
        candidate = Cut(dropped, current if elide else dropped)
        if sizes.size(candidate, last) <= target:
            return candidate
    return Cut(current, current)


def plan(history: list[Message], room: float, low: float | None = None, elide: bool = True) -> Plan:
    """Return what to send of `history` so its messages' estimate stays within `room`.

    `history` must be valid (repaired): it opens with a user message. Messages may carry an
    `id` (where they are stored); what is sent carries only `role` and `content`. After a
    trim step the messages fill at most `low` (default LOW) of the room. Without `elide`
    (the API clears old tool results itself) only whole turns are left out, unless the
    current turn alone is too big.
    """
    low = LOW if low is None else low
    if not history:
        return Plan([], 0, Cut(), Cut(), 0, 0, 0, False)
    sizes = _Sizes(history)
    cut = previous = Cut()
    last = len(history) - 1
    checkpoints = [i for i, m in enumerate(history) if m.get("role") == "user" or i == last]
    # The request (ending at a checkpoint) that first sent the current trim point.
    since = 0
    for index in checkpoints:
        previous = cut
        if sizes.size(cut, index) > room:
            cut = _step(sizes, cut, index, low * room, elide)
            if cut != previous:
                since = index
    first = sizes.starts[cut.dropped]
    elide_to = sizes.starts[cut.elided]
    kept = [sizes.lean[i] if i < elide_to else history[i] for i in range(first, last + 1)]
    if cut.dropped:
        kept[0] = sizes.heads[first]
    elided = sizes.elided_results(cut)
    tokens = sizes.size(cut, last)
    squeezed = False
    if tokens > room:
        kept, tokens, extra = _squeeze(sizes, kept, first, max(elide_to, first + 1), last)
        elided, squeezed = elided + extra, extra > 0
    return Plan(
        messages=[_sent(m) for m in kept],
        tokens=tokens,
        cut=cut,
        previous=previous,
        first_kept=first,
        elided_results=elided,
        previous_elided=sizes.elided_results(previous),
        squeezed=squeezed,
        # A squeezed turn's notes move from call to call: nothing kept is as it was answered.
        stale=len(kept) if squeezed else max(0, since - first),
    )


def _sent(message: Message) -> Message:
    """What a request takes of a message: its role and content, and the notes sent before it."""
    sent = {"role": message["role"], "content": message["content"]}
    if message.get("preamble"):
        sent["preamble"] = message["preamble"]
    return sent


def _squeeze(
    sizes: _Sizes, kept: list[Message], first: int, since: int, last: int
) -> tuple[list[Message], int, int]:
    """The current turn alone is too big: note its bulky results from `since`, except the
    newest ones (the first message is a question: its own results, if any, are gone)."""
    out, tokens, extra = list(kept), 0, 0
    for i in range(first, last + 1):
        message = out[i - first]
        if since <= i < last and sizes.notes[i]:
            message, extra = sizes.lean[i], extra + sizes.notes[i]
            out[i - first] = message
        tokens += message_tokens(message)
    return out, tokens, extra

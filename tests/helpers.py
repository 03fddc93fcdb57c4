"""Test helpers: a scripted model client and a checker of the client event protocol."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from streaming.sse import iter_json_events

TRANSCRIPTS = Path(__file__).resolve().parents[2] / "shared" / "transcripts"


def transcript_events(name: str) -> list[dict[str, Any]]:
    """Return the decoded events of a transcript in ../shared/transcripts."""
    return list(iter_json_events([(TRANSCRIPTS / name).read_bytes()]))


# Hand-made transcripts shaped like the API's, for streams no recording holds.
OWN_TRANSCRIPTS = Path(__file__).resolve().parent / "streaming" / "transcripts"


def own_transcript_events(name: str) -> list[dict[str, Any]]:
    """Return the decoded events of a transcript in tests/streaming/transcripts."""
    return list(iter_json_events([(OWN_TRANSCRIPTS / name).read_bytes()]))


async def _play(events: list[Any]) -> AsyncIterator[bytes]:
    for event in events:
        await asyncio.sleep(0)  # each event is a read of its own, as from a socket
        if isinstance(event, BaseException):
            raise event
        if isinstance(event, bytes):
            yield event  # raw stream bytes, cut wherever the test chose
            continue
        yield b"event: %s\ndata: %s\n\n" % (event["type"].encode(), json.dumps(event).encode())


class ScriptedModel:
    """A model client that plays one scripted event list per call and records requests.

    A script may be an Exception, raised when the call opens (like an HTTP error status);
    an Exception among a script's events is raised at that point of the stream.
    """

    model, max_tokens = "scripted", 4096

    def __init__(self, scripts: list[Any]) -> None:
        self.scripts = list(scripts)
        self.requests: list[list[dict[str, Any]]] = []

    @asynccontextmanager
    async def open(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> AsyncIterator[AsyncIterator[bytes]]:
        """Yield the next script's events as SSE bytes."""
        self.requests.append(json.loads(json.dumps(messages)))
        if not self.scripts:
            raise AssertionError("the model was called more times than scripted")
        script = self.scripts.pop(0)
        if isinstance(script, BaseException):
            raise script
        yield _play(script)

    async def close(self) -> None:
        """Nothing to close."""


def assert_well_formed(events: list[tuple[int, str, dict[str, Any]]]) -> None:
    """Check the protocol rules: ids 1..n, starts before deltas before ends, turn_end last."""
    assert [seq for seq, _, _ in events] == list(range(1, len(events) + 1))
    assert events[0][1] == "turn_start"
    assert events[-1][1] == "turn_end"
    assert sum(1 for _, t, _ in events if t == "turn_end") == 1
    open_messages: set[str] = set()
    open_blocks: set[str] = set()
    for _, kind, data in events:
        if kind == "message_start":
            open_messages.add(data["message_id"])
        elif kind in ("message_end", "message_discarded"):
            assert data["message_id"] in open_messages, data
            assert not any(b.startswith(data["message_id"] + ".") for b in open_blocks), data
            open_messages.discard(data["message_id"])
        elif kind == "block_start":
            assert data["message_id"] in open_messages
            assert data["block_id"] not in open_blocks
            open_blocks.add(data["block_id"])
        elif kind == "block_delta":
            assert data["block_id"] in open_blocks, data
        elif kind == "block_end":
            assert data["block_id"] in open_blocks, data
            open_blocks.discard(data["block_id"])
    assert not open_messages and not open_blocks, (open_messages, open_blocks)


def text_of(events: list[tuple[int, str, dict[str, Any]]]) -> str:
    """Concatenate the text deltas of the messages that were not discarded."""
    discarded = {d["message_id"] for _, t, d in events if t == "message_discarded"}
    return "".join(
        d["delta"].get("text", "")
        for _, t, d in events
        if t == "block_delta" and d["message_id"] not in discarded
    )

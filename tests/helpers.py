"""Test helpers: a scripted model client and a checker of the client event protocol."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from streaming.sse import iter_json_events

TRANSCRIPTS = Path(__file__).resolve().parents[2] / "shared" / "transcripts"


def transcript_events(name: str) -> list[dict[str, Any]]:
    """Return the decoded events of a transcript in ../shared/transcripts."""
    return list(iter_json_events([(TRANSCRIPTS / name).read_bytes()]))


def _play(events: list[Any]) -> Iterator[dict[str, Any]]:
    for event in events:
        if isinstance(event, BaseException):
            raise event
        yield event


class ScriptedModel:
    """A model client that plays one scripted event list per call and records requests.

    A script may be an Exception, raised when the call opens (like an HTTP error status);
    an Exception among a script's events is raised at that point of the stream.
    """

    def __init__(self, scripts: list[Any]) -> None:
        self.scripts = list(scripts)
        self.requests: list[list[dict[str, Any]]] = []

    @contextmanager
    def stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], call: Any
    ) -> Iterator[Any]:
        """Yield `call` playing the next script."""
        self.requests.append(json.loads(json.dumps(messages)))
        if not self.scripts:
            raise AssertionError("the model was called more times than scripted")
        script = self.scripts.pop(0)
        if isinstance(script, BaseException):
            raise script
        call.events = lambda: _play(script)
        yield call


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


def start_loop() -> Any:
    """An event loop (uvloop, as servers run) in a daemon thread; stop it with loop.stop."""
    import asyncio
    import threading

    import uvloop

    loop = uvloop.new_event_loop()
    ready = threading.Event()

    def run() -> None:
        asyncio.set_event_loop(loop)
        loop.call_soon(ready.set)
        loop.run_forever()

    threading.Thread(target=run, name="test-loop", daemon=True).start()
    ready.wait(5)
    return loop


def in_loop(loop: Any, fn: Any, *args: Any) -> Any:
    """Call `fn(*args)` in the loop's thread and return its result."""
    import asyncio

    async def call() -> Any:
        return fn(*args)

    return asyncio.run_coroutine_threadsafe(call(), loop).result(10)

"""Shared fixtures for streaming tests: transcripts and the anthropic-SDK oracle.

The transcripts live outside the repo in ../shared/transcripts and are read at run time.
Tests that take a `transcript` or `message_transcript` argument are parametrized over them.

SDK oracle (`sdk_oracle` fixture): feeds the same event dicts to the SDK's own
`anthropic.lib.streaming._messages.accumulate_event` and normalises its snapshot only
where the SDK knowingly differs from our documented behaviour:

N1. `ping` and `error` events are not fed, as the SDK's Stream/MessageStream drop or
    raise on them before accumulation.
N2. The SDK keeps blocks that never got `content_block_stop` in `content`; we keep only
    stopped blocks.  The oracle returns stopped blocks (by index) as the message content
    and the others separately, to compare with `incomplete_blocks()`.
N3. The SDK ignores delta types it does not know (e.g. `compaction_delta`).  The oracle
    applies the spec's generic merge for those deltas to the SDK block afterwards
    (named tests also assert the exact merged values).
N4. The SDK's message_delta always writes `stop_details` (None when absent); if no event
    carried `stop_details`, a None value is dropped from the SDK result.
N5. The SDK copies only a fixed list of usage fields from message_delta (input/output
    tokens, cache_*_input_tokens, server_tool_use, output_tokens_details).  Any other
    non-null message_delta usage field (e.g. `iterations`) is overlaid on the SDK usage,
    since we treat every message_delta usage value as a cumulative total.
N6. The SDK crashes when `usage` is missing from message_start or message_delta (the
    abridged docs transcript).  The oracle then feeds zero/previous usage values and
    removes the fabricated keys from the result.
A repeated message_start is fed unchanged: the SDK ignores it (and so would leak earlier
blocks), so the oracle only agrees with us where no block precedes the repeat.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from anthropic.lib.streaming._messages import accumulate_event

from streaming.messages.accumulator import MessageAccumulator
from streaming.wire.sse import iter_json_events

TRANSCRIPTS = Path(__file__).resolve().parents[2].parent / "shared" / "transcripts"
ELIDED = "anthropic-docs-2025-08__web_search_server_tool_ELIDED.sse"

SDK_DELTA_TYPES = {
    "text_delta",
    "input_json_delta",
    "citations_delta",
    "thinking_delta",
    "signature_delta",
}
SDK_MERGED_USAGE = {
    "output_tokens",
    "input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "server_tool_use",
    "output_tokens_details",
}


def transcript_names() -> list[str]:
    """Every *.sse transcript file name, sorted ([] if the directory is missing)."""
    if not TRANSCRIPTS.is_dir():
        return []
    return sorted(path.name for path in TRANSCRIPTS.glob("*.sse"))


@cache
def transcript_bytes(name: str) -> bytes:
    """Raw bytes of one transcript."""
    return (TRANSCRIPTS / name).read_bytes()


@cache
def _events(name: str) -> tuple[dict[str, Any], ...]:
    return tuple(iter_json_events([transcript_bytes(name)]))


def transcript_events(name: str) -> list[dict[str, Any]]:
    """Decoded JSON events of one transcript (fresh list; event dicts are shared, read-only)."""
    return list(_events(name))


def message_transcript_names() -> list[str]:
    """Parseable transcripts that contain a message_start."""
    return [
        name
        for name in transcript_names()
        if name != ELIDED and any(e.get("type") == "message_start" for e in _events(name))
    ]


def error_only_transcript_names() -> list[str]:
    """Transcripts that carry an error event and no message_start."""
    return [
        name
        for name in transcript_names()
        if name not in message_transcript_names()
        and any(e.get("type") == "error" for e in _events(name))
    ]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize `transcript` / `message_transcript` / `error_transcript` arguments."""
    if "transcript" in metafunc.fixturenames:
        metafunc.parametrize("transcript", transcript_names())
    if "message_transcript" in metafunc.fixturenames:
        metafunc.parametrize("message_transcript", message_transcript_names())
    if "error_transcript" in metafunc.fixturenames:
        metafunc.parametrize("error_transcript", error_only_transcript_names())


def accumulate(events: Iterable[dict[str, Any]]) -> MessageAccumulator:
    """Feed events to a fresh MessageAccumulator."""
    acc = MessageAccumulator()
    for event in events:
        acc.feed(event)
    return acc


def _generic_merge(block: dict[str, Any], delta: dict[str, Any]) -> None:
    for key, value in delta.items():
        if key == "type":
            continue
        current = block.get(key)
        block[key] = (
            current + value if isinstance(current, str) and isinstance(value, str) else value
        )


def oracle(events: Iterable[dict[str, Any]]) -> tuple[dict[str, Any] | None, list[tuple[int, Any]]]:
    """Return (normalised SDK final message, SDK blocks never stopped) for the events."""
    snapshot: Any = None
    json_bufs: dict[int, bytes] = {}
    start_order: list[int] = []
    stopped: set[int] = set()
    unknown: list[tuple[int, dict[str, Any]]] = []
    extra_usage: dict[str, Any] = {}
    real_usage_keys: set[str] = set()
    fabricated: set[str] = set()
    stop_details_seen = False
    with warnings.catch_warnings():
        # The SDK warns when serialising block types it does not model (e.g. compaction).
        warnings.simplefilter("ignore")
        for event in events:
            kind = event.get("type")
            if kind in ("ping", "error"):  # N1
                continue
            if kind == "message_start" and snapshot is None:
                message = event["message"]
                stop_details_seen |= "stop_details" in message
                real_usage_keys |= set(message.get("usage") or {})
                if "usage" not in message:  # N6
                    fabricated = {"input_tokens", "output_tokens"}
                    message = {**message, "usage": {"input_tokens": 0, "output_tokens": 0}}
                    event = {**event, "message": message}
            elif kind == "content_block_start":
                start_order.append(event["index"])
            elif kind == "content_block_stop":
                stopped.add(event["index"])
            elif (
                kind == "content_block_delta" and event["delta"].get("type") not in SDK_DELTA_TYPES
            ):
                unknown.append((event["index"], event["delta"]))  # N3
            elif kind == "message_delta":
                stop_details_seen |= "stop_details" in (event.get("delta") or {})
                usage = event.get("usage")
                if usage is None:  # N6
                    event = {**event, "usage": {"output_tokens": snapshot.usage.output_tokens}}
                else:
                    real_usage_keys |= {k for k, v in usage.items() if v is not None}
                    extra_usage.update(
                        {
                            k: v
                            for k, v in usage.items()
                            if k not in SDK_MERGED_USAGE and v is not None
                        }
                    )  # N5
            snapshot = accumulate_event(event=event, current_snapshot=snapshot, json_bufs=json_bufs)
        if snapshot is None:
            return None, []
        result = snapshot.to_dict()
    by_index = dict(zip(start_order, result["content"], strict=True))
    for index, delta in unknown:
        _generic_merge(by_index[index], delta)
    result["content"] = [by_index[i] for i in sorted(by_index) if i in stopped]  # N2
    incomplete = [(i, by_index[i]) for i in sorted(by_index) if i not in stopped]
    if result.get("stop_details") is None and not stop_details_seen:  # N4
        result.pop("stop_details", None)
    result["usage"].update(extra_usage)
    for key in fabricated - real_usage_keys:
        result["usage"].pop(key, None)
    return result, incomplete


@pytest.fixture(scope="session")
def sdk_oracle() -> Callable[..., tuple[dict[str, Any] | None, list[tuple[int, Any]]]]:
    """The SDK oracle function (see module docstring for its normalisations)."""
    return oracle


@pytest.fixture(scope="session")
def load_events() -> Callable[[str], list[dict[str, Any]]]:
    """Function: transcript name -> decoded JSON events."""
    return transcript_events


@pytest.fixture(scope="session")
def load_bytes() -> Callable[[str], bytes]:
    """Function: transcript name -> raw bytes."""
    return transcript_bytes


@pytest.fixture(scope="session")
def run_accumulator() -> Callable[[Iterable[dict[str, Any]]], MessageAccumulator]:
    """Function: events -> MessageAccumulator that consumed them."""
    return accumulate

"""Prompt caching through the real engine, over sockets, against the caching-rules upstream."""

from __future__ import annotations

import itertools
import shutil
from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest

import engine.upstream.caching as caching
import engine.upstream.client as client
from tests.cachesim.drive import Conversation, converse
from tests.cachesim.ideal import ideal_billed
from tests.cachesim.rules import MAX_BREAKPOINTS, MIN_TOKENS, points, strip

# Questions 0 and 3 take two tool rounds; 7 has one round wider than the 20-block lookback.
TURNS = [0, 7, 3]
# What this short conversation must stay under; the broken placements below all exceed it.
BOUND, IDEAL_SLACK = 0.35, 1.10

Runner = Callable[..., Conversation]


@pytest.fixture(scope="module")
def run(migrated_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Runner:
    """Run the conversation on a fresh database; PROMPT_CACHE as given."""
    counter = itertools.count()

    def go(mode: str, **config: Any) -> Conversation:
        path = tmp_path_factory.mktemp("cache") / f"run{next(counter)}.db"
        shutil.copy(migrated_template, path)
        return converse(f"sqlite:///{path}", mode, TURNS, **config)

    return go


@pytest.fixture(scope="module")
def cached(run: Runner) -> Conversation:
    """The conversation with the default PROMPT_CACHE=5m."""
    return run("5m")


def problems(conv: Conversation, billing: bool = True) -> list[str]:
    """Everything a sound placement must never do, found in one conversation's requests."""
    found = [f"rejected: {r}" for r in conv.rejected]
    found += [f"turn {k} {s}" for k, s in enumerate(conv.statuses) if s != "completed"]
    prompts = [points(body) for body in conv.bodies]
    for k, prompt in enumerate(prompts):
        marks = [p for p in prompt if p.ttl]
        if len(marks) > MAX_BREAKPOINTS:
            found.append(f"call {k}: {len(marks)} breakpoints")
        if k + 1 == len(prompts):
            break
        later = {p.key for p in prompts[k + 1]}
        if any(p.key not in later for p in marks):
            found.append(f"call {k + 1} changed a prefix that call {k} cached")
        written = max((p.tokens for p in marks if p.tokens >= MIN_TOKENS), default=0)
        if conv.usages[k + 1].cache_read_input_tokens < written:
            found.append(f"call {k + 1} wrote again what call {k} cached")
    uncached = sum(usage.total for usage in conv.usages)
    if not billing:
        return found
    if conv.billed() > BOUND * uncached:
        found.append(f"billed {conv.billed() / uncached:.2f}x of uncached")
    try:
        ideal = ideal_billed(conv.bodies)
    except ValueError as err:
        return [*found, str(err)]
    if conv.billed() > IDEAL_SLACK * ideal:
        found.append(f"billed {conv.billed() / ideal:.2f}x of ideal")
    return found


def test_every_call_reads_the_last_ones_prefix_across_rounds_and_turns(
    cached: Conversation,
) -> None:
    assert problems(cached) == []
    counts = [sum(1 for p in points(body) if p.ttl) for body in cached.bodies]
    assert counts == [2] + [3] * 7, "system, where the last call ended, the newest message"
    first, *rest = cached.usages
    assert first.cache_read_input_tokens == 0 and first.input_tokens == 0
    assert all(u.cache_read_input_tokens > 0 for u in rest)


def test_off_sends_no_markers_and_the_same_requests(run: Runner, cached: Conversation) -> None:
    off = run("off")
    assert off.statuses == ["completed"] * len(TURNS)
    assert all(points(body) and not any(p.ttl for p in points(body)) for body in off.bodies)
    assert all(u.cache_read_input_tokens == u.cache_creation_input_tokens == 0 for u in off.usages)
    assert [strip(body) for body in cached.bodies] == off.bodies


def test_1h_marks_every_breakpoint_with_the_long_ttl(run: Runner) -> None:
    hour = run("1h")
    assert problems(hour, billing=False) == []
    assert {p.ttl for body in hour.bodies for p in points(body)} == {None, "1h"}
    assert sum(u.write_5m for u in hour.usages) == 0
    assert sum(u.write_1h for u in hour.usages) > 0


def _date_in_system_moves_every_call(monkeypatch: pytest.MonkeyPatch) -> None:
    days = itertools.count()
    request = client.ModelClient.request

    def dated(self: client.ModelClient, *args: Any, **kwargs: Any) -> dict[str, Any]:
        day = date(2026, 1, 1) + timedelta(next(days))
        system = [*kwargs.pop("system", []), {"type": "text", "text": f"Today is {day}."}]
        return request(self, *args, system=system, **kwargs)

    monkeypatch.setattr(client.ModelClient, "request", dated)


def _no_marker_where_the_last_call_ended(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(caching, "_previous_end", lambda messages: None)


def _synthetic_anchor_block(monkeypatch: pytest.MonkeyPatch) -> None:
    def anchor(message: dict[str, Any], mark: dict[str, str]) -> dict[str, Any]:
        block = {"type": "text", "text": "(cache anchor)", "cache_control": mark}
        return {**message, "content": [*message["content"], block]}

    monkeypatch.setattr(caching, "_mark_last", anchor)


@pytest.mark.parametrize(
    "breakage",
    [
        _date_in_system_moves_every_call,
        _no_marker_where_the_last_call_ended,
        _synthetic_anchor_block,
    ],
)
def test_the_checks_catch_a_broken_placement(
    run: Runner, monkeypatch: pytest.MonkeyPatch, breakage: Callable[..., None]
) -> None:
    breakage(monkeypatch)
    assert problems(run("5m")) != []

"""A 40-turn conversation in a small window, through the real app and a caching upstream.

The upstream refuses any prompt longer than its window (as the API does) and bills each
request under Anthropic's prompt-caching rules (tests/cachesim).
"""

from __future__ import annotations

import itertools
import shutil
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

import engine.upstream.context as context
from streaming.history import validate_history
from tests.cachesim.rules import points, strip
from tests.context.drive import Long, converse_long

TURNS = 40
# About a third of what the whole conversation needs: the server must trim many times.
WINDOW, MAX_TOKENS = 12_000, 1000

Runner = Callable[..., Long]


@pytest.fixture(scope="module")
def run(migrated_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Runner:
    counter = itertools.count()

    def go(**config: Any) -> Long:
        path = tmp_path_factory.mktemp("long") / f"run{next(counter)}.db"
        shutil.copy(migrated_template, path)
        return converse_long(
            f"sqlite:///{path}",
            TURNS,
            WINDOW,
            MODEL_CONTEXT_TOKENS=WINDOW,
            MAX_TOKENS=MAX_TOKENS,
            **config,
        )

    return go


@pytest.fixture(scope="module")
def long(run: Runner) -> Long:
    return run()


def notes(body: dict[str, Any]) -> int:
    return sum(
        1
        for m in body["messages"]
        for b in m["content"]
        if b.get("type") == "tool_result" and str(b.get("content")).startswith("[result of")
    )


def test_every_turn_completes_and_every_request_fits(long: Long) -> None:
    assert long.statuses == ["completed"] * TURNS
    assert long.too_long == [] and long.rejected == []
    for body in long.bodies:
        assert points(body)[-1].tokens + body["max_tokens"] <= WINDOW
    # Trimming did happen: the last requests leave the first turns out.
    assert len(long.bodies[-1]["messages"]) < len(long.stored)


def test_every_history_sent_is_valid(long: Long) -> None:
    for body in long.bodies:
        assert validate_history(strip(body)["messages"]) == []


def test_nothing_stored_is_lost(long: Long) -> None:
    assert validate_history(long.stored, expect_user_last=False) == []
    questions = [
        m["content"][0]["text"]
        for m in long.stored
        if m["role"] == "user" and m["content"][0]["type"] == "text"
    ]
    assert [q.rsplit("(#", 1)[1] for q in questions] == [f"{k})" for k in range(TURNS)]
    shown = {m["id"]: m for m in long.shown["messages"]}
    assert all(m["id"] in shown and shown[m["id"]]["content"] == m["content"] for m in long.stored)
    # What the last request left out is still stored in full.
    first_sent = long.bodies[-1]["messages"][0]["content"][0]["text"]
    assert questions.index(first_sent) > 0


def test_every_call_stores_the_usage_the_api_reported_with_its_cache_fields(long: Long) -> None:
    replies = [m for m in long.shown["messages"] if m["role"] == "assistant"]
    assert len(replies) == len(long.usages)
    for message, usage in zip(replies, long.usages, strict=True):
        assert {k: message["usage"][k] for k in usage.api()} == usage.api()
    totals = long.shown["usage"]
    assert totals["cache_read_input_tokens"] == sum(u.cache_read_input_tokens for u in long.usages)
    written = sum(u.cache_creation_input_tokens for u in long.usages)
    assert totals["cache_creation_input_tokens"] == written
    # claude-sonnet-* at the default prices: $3 in, $15 out, writes 1.25x, reads 0.1x.
    output = sum(m["usage"]["output_tokens"] for m in replies)
    dollars = (
        sum(u.input_tokens for u in long.usages) * Decimal(3)
        + output * Decimal(15)
        + written * Decimal("3.75")
        + totals["cache_read_input_tokens"] * Decimal("0.3")
    ) / 1_000_000
    assert long.shown["cost"]["amount"] == str(dollars.quantize(Decimal("0.000001")))


def test_clients_are_told_once_per_change_before_the_call_that_uses_it(long: Long) -> None:
    told = [d for events in long.events for _, kind, d in events if kind == "context_trimmed"]
    assert told, "the conversation outgrew the window"
    assert [d["omitted_turns"] for d in told] == sorted(d["omitted_turns"] for d in told)
    stored = {m["id"]: m for m in long.stored}
    for d in told:
        assert d["omitted_messages"] == list(stored).index(d["first_kept_message_id"])
    shape = [(strip(b)["messages"][0], notes(b)) for b in long.bodies]
    changes = sum(1 for a, b in itertools.pairwise(shape) if a != b)
    assert len(told) == changes
    for events in long.events:
        kinds = [kind for _, kind, _ in events]
        for i, kind in enumerate(kinds):
            if kind == "context_trimmed":
                assert kinds[i + 1] == "message_start", "told right before the call"


def test_trimming_in_big_steps_keeps_the_cache_warm(
    long: Long, run: Runner, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(context, "LOW", 0.98)  # trim just enough: about a turn at a time
    naive = run()
    assert naive.statuses == ["completed"] * TURNS
    steps = sum(1 for e in long.events for _, kind, _ in e if kind == "context_trimmed")
    naive_steps = sum(1 for e in naive.events for _, kind, _ in e if kind == "context_trimmed")
    assert steps * 2 <= naive_steps
    assert long.billed() < naive.billed()
    reads = sum(u.cache_read_input_tokens for u in long.usages)
    assert reads > long.uncached() / 2, "most input is read from the cache"
    with capsys.disabled():
        sent = len(long.bodies) + len(long.too_long)
        print(
            f"\n{TURNS} turns, window {WINDOW}: {sent} requests sent, {len(long.too_long)} "
            f"rejected; {steps} trim steps; billed input {long.billed():,.0f} of "
            f"{long.uncached():,} ({long.billed() / long.uncached():.3f}x); trimming a turn at "
            f"a time: {naive_steps} steps, billed {naive.billed():,.0f}"
        )

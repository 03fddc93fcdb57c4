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

import engine.upstream.selection as context
from engine.upstream.catalog import MODELS
from streaming.messages.history import validate_history
from tests.cachesim.ideal import ideal_billed
from tests.cachesim.rules import points, strip
from tests.context.drive import Long, converse_long

# Conversations of 40 turns, one per strategy: over a minute in all.
pytestmark = pytest.mark.slow

TURNS = 40
# About a third of what the whole conversation needs: the server must trim many times.
# The finance tools take about 4,800 tokens of it (thirteen tools); the rest holds the history,
# several turns of it, so that trimming in big steps takes out several turns at once.
WINDOW, MAX_TOKENS = 20_000, 1000

Runner = Callable[..., Long]


@pytest.fixture(scope="module")
def run(migrated_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Runner:
    counter = itertools.count()

    def go(window: int = WINDOW, pad: int = 0, **config: Any) -> Long:
        path = tmp_path_factory.mktemp("long") / f"run{next(counter)}.db"
        shutil.copy(migrated_template, path)
        return converse_long(
            f"sqlite:///{path}",
            TURNS,
            window,
            pad=pad,
            MODEL_CONTEXT_TOKENS=window,
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
    # The model's row in the table: input and output, writes 1.25x, reads 0.1x of input.
    models = {m["model"] for m in replies}
    (model,) = models
    row = MODELS[model].prices
    price_in, price_out = Decimal(str(row["input"])), Decimal(str(row["output"]))
    output = sum(m["usage"]["output_tokens"] for m in replies)
    dollars = (
        sum(u.input_tokens for u in long.usages) * price_in
        + output * price_out
        + written * price_in * Decimal("1.25")
        + totals["cache_read_input_tokens"] * price_in * Decimal("0.1")
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


# Compaction's least trigger is 50,000 tokens: its window is larger, and each question
# carries a pasted statement (about 8,000 tokens) so the conversation outgrows it often.
# Editing's trigger is half the room, and the tools take a fixed part of it: its window leaves
# the history room for more than the newest four tool uses, so clearing has something to clear.
STRATEGIES = {
    "edit": {"window": 18_000},
    "compact": {"window": 100_000, "pad": 32_000, "MAX_MESSAGE_CHARS": 40_000},
}
IDEAL_SLACK = 1.10


@pytest.fixture(scope="module", params=sorted(STRATEGIES))
def managed(run: Runner, request: pytest.FixtureRequest) -> tuple[str, Long]:
    kind = request.param
    return kind, run(CONTEXT_STRATEGY=kind, **STRATEGIES[kind])


def test_each_strategy_completes_every_turn_within_the_window(managed: tuple[str, Long]) -> None:
    kind, long = managed
    window = STRATEGIES[kind]["window"]
    assert long.statuses == ["completed"] * TURNS
    assert long.too_long == [] and long.rejected == []
    for body in long.bodies:
        assert points(body)[-1].tokens + body["max_tokens"] <= window
        edits = body["context_management"]["edits"]
        assert [e["type"] for e in edits] == [
            {"edit": "clear_tool_uses_20250919", "compact": "compact_20260112"}[kind]
        ]
        messages = strip(body)["messages"]
        assert validate_history(messages) == []
    # Nothing stored is lost, whatever the model was sent.
    assert validate_history(long.stored, expect_user_last=False) == []
    shown = {m["id"]: m for m in long.shown["messages"]}
    assert all(shown[m["id"]]["content"] == m["content"] for m in long.stored)


def test_the_server_acted_many_times_and_clients_were_told(managed: tuple[str, Long]) -> None:
    kind, long = managed
    ends = [d for events in long.events for _, k, d in events if k == "message_end"]
    if kind == "edit":
        applied = [m.applied_edits for m in long.managed if m.applied_edits]
        assert len(applied) >= 5
        told = [d["context_management"] for d in ends if "context_management" in d]
        assert [t["applied_edits"] for t in told] == applied
        stored = [
            m["usage"]["context_management"]
            for m in long.shown["messages"]
            if "context_management" in (m.get("usage") or {})
        ]
        assert stored == told
        return
    compactions = [m.compaction for m in long.managed if m.compaction]
    assert len(compactions) >= 3
    for block in compactions:
        # Stored whole and verbatim as the first block of its reply...
        replies = [m for m in long.stored if m["content"] and m["content"][0] == block]
        assert len(replies) == 1
        # ...and every later request starts from it until the next one.
        index = next(i for i, m in enumerate(long.managed) if m.compaction == block)
        opener, compacted = long.bodies[index + 1]["messages"][:2]
        assert opener["role"] == "user" and "cache_control" not in str(opener)
        following = compacted["content"][0]
        assert {k: v for k, v in following.items() if k != "cache_control"} == block
        assert following["cache_control"] == {"type": "ephemeral"}
    # Every iteration is billed: the totals shown include the compaction iterations.
    assert long.shown["usage"]["input_tokens"] == sum(u.input_tokens for u in long.usages)
    with_iterations = [m for m in long.shown["messages"] if "iterations" in (m.get("usage") or {})]
    assert len(with_iterations) == len(compactions)


def test_each_strategy_bills_within_10_percent_of_the_ideal(
    long: Long, managed: tuple[str, Long], capsys: pytest.CaptureFixture[str]
) -> None:
    kind, run = managed
    for name, conv in (("trim", long), (kind, run)):
        ideal = ideal_billed(conv.prompts)
        ratio = conv.billed() / ideal
        with capsys.disabled():
            print(
                f"\n{name}: {len(conv.bodies)} requests, billed input {conv.billed():,.0f} of "
                f"{conv.uncached():,} ({conv.billed() / conv.uncached():.3f}x); ideal "
                f"{ideal:,.0f}: {ratio:.3f}x of it"
            )
        assert ratio <= IDEAL_SLACK, f"{name}: {ratio:.3f}x of ideal"

"""'prompt is too long' from the API: trim by its numbers and retry once; never stuck."""

from __future__ import annotations

import itertools
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from streaming.messages.history import validate_history
from tests.cachesim.rules import points, strip
from tests.context.drive import Long, converse_long

# The finance tools take about 4,800 tokens of it (thirteen tools); the rest holds the history.
WINDOW, MAX_TOKENS = 15_500, 1000

Runner = Callable[..., Long]


@pytest.fixture
def run(migrated_template: Path, tmp_path: Path) -> Runner:
    counter = itertools.count()

    def go(turns: int | list[int], window: int = WINDOW, **config: Any) -> Long:
        path = tmp_path / f"run{next(counter)}.db"
        shutil.copy(migrated_template, path)
        return converse_long(f"sqlite:///{path}", turns, window, MAX_TOKENS=MAX_TOKENS, **config)

    return go


def recovered_in_the_same_round(long: Long) -> None:
    """Every refusal is followed by one smaller request for the same round, which is served."""
    refused = [i for i, kind in enumerate(long.served) if kind == "Status"]
    assert refused, "the upstream refused at least one request"
    for i in refused:
        before, after = strip(long.requests[i]), strip(long.requests[i + 1])
        assert long.served[i + 1] == "Transcript"
        assert _last_said(before) == _last_said(after), "same round"
        assert points(after)[-1].tokens < points(before)[-1].tokens
        assert validate_history(after["messages"]) == []


def _last_said(body: dict[str, Any]) -> dict[str, Any]:
    """The request's last user or assistant message: a smaller retry may tell the date again
    after it (a `system` note), when the note that told it before was trimmed away."""
    said: dict[str, Any] = [m for m in body["messages"] if m["role"] != "system"][-1]
    return said


def test_a_tokenizer_that_counts_more_than_the_estimate_costs_one_refusal(run: Runner) -> None:
    # The upstream finds 1.5x the tokens the server estimates. The window still holds the
    # widest turn (eleven results with their search results) at that count.
    window = 21_000
    long = run(20, window=window, density=2.0, MODEL_CONTEXT_TOKENS=window)
    assert long.statuses == ["completed"] * 20
    recovered_in_the_same_round(long)
    assert len(long.too_long) == 1, "the session's scale is learned from the refusal"


def test_a_window_smaller_than_configured_is_learned_from_the_refusal(run: Runner) -> None:
    long = run(20, MODEL_CONTEXT_TOKENS=WINDOW * 4)
    assert long.statuses == ["completed"] * 20
    recovered_in_the_same_round(long)
    assert len(long.too_long) == 1


def test_a_turn_too_big_for_the_window_fails_alone_and_the_session_goes_on(
    run: Runner,
) -> None:
    # Question 7 makes eleven tool calls at once: their results alone overflow this window,
    # which holds every other turn (search results included).
    window = 9000
    long = run([7, 2, 4], window=window, MODEL_CONTEXT_TOKENS=window)
    assert long.statuses == ["failed", "completed", "completed"]
    errors = [d for _, kind, d in long.events[0] if kind == "turn_error"]
    assert [e["code"] for e in errors] == ["prompt_too_long"]
    assert "context window" in errors[0]["message"]
    # Nothing smaller could be sent, so it was not retried; later turns leave it out of the
    # model's view (dropped, or its results noted), but it stays stored.
    assert long.served.count("Status") == 1
    big = [b for m in long.stored for b in m["content"] if "toolu_long_07" in str(b)]
    assert len([b for b in big if b["type"] == "tool_result"]) == 11
    for body in long.bodies[1:]:
        sent = [b for m in body["messages"] for b in m["content"] if "toolu_long_07" in str(b)]
        assert all(
            "[result of" in str(b.get("content")) for b in sent if b["type"] == "tool_result"
        )

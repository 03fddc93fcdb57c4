"""Fitting requests: the output budget, learning from usage and refusals, classifying them."""

from __future__ import annotations

from typing import Any

import anthropic
import httpx2
import pytest

from engine.turns.window import ContextWindow
from engine.upstream.estimate import message_tokens
from engine.upstream.retry import classify, too_long

TOOLS = [{"name": "get_transactions", "description": "d" * 300, "input_schema": {}}]


def conversation(turns: int) -> list[dict[str, Any]]:
    history: list[dict[str, Any]] = []
    for t in range(turns):
        history += [
            {"role": "user", "content": f"question {t} " + "q" * 200, "id": f"q{t}"},
            {"role": "assistant", "content": [{"type": "text", "text": "answer " * 60}]},
        ]
    return [*history, {"role": "user", "content": "and now?", "id": f"q{turns}"}]


def test_the_output_budget_and_the_fixed_part_are_kept_free() -> None:
    history = conversation(20)
    whole = sum(message_tokens(m) for m in history)
    window = ContextWindow(context_tokens=whole + 500 + 1000, max_tokens=1000)
    fit = window.fit("s", history, TOOLS)
    tools = window.overhead(TOOLS)
    assert fit.plan.omitted_turns == 0 and tools < 500
    tight = ContextWindow(context_tokens=whole + 1000, max_tokens=1000)
    assert tight.fit("s", history, TOOLS).plan.omitted_turns > 0
    assert tight.fit("s", history, TOOLS).estimate <= whole + 1000 - 1000


def test_reported_usage_above_the_estimate_scales_the_session_up_only() -> None:
    history = conversation(20)
    window = ContextWindow(context_tokens=6000, max_tokens=500)
    first = window.fit("s", history, TOOLS)
    window.observe("s", first, {"input_tokens": 10, "cache_read_input_tokens": first.estimate})
    scaled = window.fit("s", history, TOOLS)
    assert scaled.scale > 1 and scaled.plan.omitted_turns >= first.plan.omitted_turns
    assert scaled.estimate * scaled.scale <= 6000 - 500
    window.observe("s", scaled, {"input_tokens": 1})  # fewer than estimated: ignored
    assert window.fit("s", history, TOOLS).scale == scaled.scale
    assert window.fit("other", history, TOOLS).scale == 1.0, "per session"


def test_a_refusal_teaches_the_real_count_and_the_real_window() -> None:
    history = conversation(90)
    window = ContextWindow(context_tokens=20_000, max_tokens=1000)
    fit = window.fit("s", history, TOOLS)
    assert fit.estimate * 1.5 > 20_000, "a real tokenizer finds more than the window holds"
    window.refused("s", fit, tokens=int(fit.estimate * 1.5), maximum=20_000)
    again = window.fit("s", history, TOOLS)
    assert again.scale >= 1.5 and again.estimate < fit.estimate
    assert again.estimate * again.scale <= 20_000 - 1000
    window.refused("s", again, tokens=again.estimate, maximum=8000)
    smaller = window.fit("s", history, TOOLS)
    assert smaller.limit == 8000 and smaller.estimate * smaller.scale <= 8000 - 1000


def test_a_window_no_bigger_than_the_output_budget_is_refused() -> None:
    with pytest.raises(ValueError, match="MODEL_CONTEXT_TOKENS"):
        ContextWindow(context_tokens=4096, max_tokens=4096)


@pytest.mark.parametrize(
    ("message", "sizes"),
    [
        ("prompt is too long: 215003 tokens > 200000 maximum", (215003, 200000)),
        (
            "input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000, "
            "decrease input length or `max_tokens` and try again",
            (188240, 200000),
        ),
        ("max_tokens: 100000 > 64000, which is the maximum allowed", None),
        ("messages.1.content: Input should be a valid list", None),
    ],
)
def test_too_long_reads_both_of_the_apis_messages(
    message: str, sizes: tuple[int, int] | None
) -> None:
    assert too_long(message) == sizes


def _refusal(message: str) -> anthropic.APIStatusError:
    body = {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    request = httpx2.Request("POST", "http://upstream/v1/messages")
    response = httpx2.Response(400, json=body, request=request)
    return anthropic.BadRequestError(f"Error code: 400 - {body}", response=response, body=body)


def test_a_too_long_refusal_is_classified_with_its_numbers() -> None:
    failure = classify(_refusal("prompt is too long: 215003 tokens > 200000 maximum"))
    assert failure.code == "prompt_too_long" and not failure.retryable
    assert failure.too_long == (215003, 200000)
    assert "215003" in failure.message and "context window" in failure.message
    other = classify(_refusal("messages: roles must alternate"))
    assert other.code == "invalid_request_error" and other.too_long is None

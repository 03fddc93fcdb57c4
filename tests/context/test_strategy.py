"""CONTEXT_STRATEGY: the request each strategy sends, its settings, the model's view, usage
iterations, and counting tokens near the window (counted, or the estimate when that fails)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import anthropic
import httpx2
import pytest

from config import Settings, Timings
from demo_model.transport import DemoTransport
from engine.turns.model_calls import ModelCalls
from engine.turns.window import ContextWindow
from engine.upstream.catalog import UNKNOWN
from engine.upstream.client import ModelClient
from engine.upstream.conversation import Conversation, freeze
from engine.upstream.estimate import billed_usage, request_input_tokens, usage_tokens
from engine.upstream.strategy import OPENER, Strategy, model_view, strategy_for
from services.pricing import price_table, summarize

QUESTION = [{"role": "user", "content": "What did I spend on groceries?"}]
CONVERSATION = Conversation(freeze([], "sys"), UNKNOWN)


def client(kind: str, cache: str = "5m", transport: Any = None) -> ModelClient:
    def make() -> anthropic.AsyncAnthropic:
        http = httpx2.AsyncClient(transport=transport or DemoTransport())
        # No SDK retries, as in production: the engine owns them (and a failed count is final).
        return anthropic.AsyncAnthropic(
            api_key="k", base_url="http://x.invalid", http_client=http, max_retries=0
        )

    return ModelClient(make, "m", 1000, "sys", cache, strategy=strategy_for(kind, 201_000, 1000))  # type: ignore[arg-type]


def test_trim_sends_no_context_management() -> None:
    params = client("trim").request(QUESTION, [])
    assert "extra_body" not in params and "extra_headers" not in params


def test_compact_sends_its_edit_and_beta_header_with_the_1h_cache_beta() -> None:
    params = client("compact", "1h").request(QUESTION, [])
    trigger = {"type": "input_tokens", "value": 120_000}
    assert params["extra_body"] == {
        "context_management": {"edits": [{"type": "compact_20260112", "trigger": trigger}]}
    }
    betas = params["extra_headers"]["anthropic-beta"].split(",")
    assert betas == ["extended-cache-ttl-2025-04-11", "compact-2026-01-12"]


def test_edit_sends_clear_tool_uses_with_a_large_clear_at_least() -> None:
    params = client("edit").request(QUESTION, [])
    (edit,) = params["extra_body"]["context_management"]["edits"]
    assert edit["type"] == "clear_tool_uses_20250919"
    assert edit["trigger"] == {"type": "input_tokens", "value": 100_000}
    assert edit["keep"] == {"type": "tool_uses", "value": 4}
    assert edit["clear_at_least"] == {"type": "input_tokens", "value": 30_000}
    assert params["extra_headers"] == {"anthropic-beta": "context-management-2025-06-27"}


def test_bad_settings_fail_fast_with_a_clear_message(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    monkeypatch.setenv("CONTEXT_STRATEGY", "summarise")
    with pytest.raises(ValueError, match="CONTEXT_STRATEGY must be one of trim, compact, edit"):
        Settings.from_env()
    monkeypatch.setenv("CONTEXT_STRATEGY", "Compact")
    assert Settings.from_env().context_strategy == "compact"
    # The API's least compaction trigger is 50,000 tokens: a small window cannot compact.
    with pytest.raises(ValueError, match="at least 83,334"):
        strategy_for("compact", 80_000, 4096)
    assert strategy_for("compact", 87_430, 4096).trigger == 50_000


def compacted_history() -> list[dict[str, Any]]:
    block = {"type": "compaction", "content": "Summary.", "encrypted_content": "opaque"}
    return [
        {"role": "user", "content": "first", "id": "m1"},
        {"role": "assistant", "content": [{"type": "text", "text": "a"}], "id": "m2"},
        {"role": "user", "content": "second", "id": "m3"},
        {"role": "assistant", "content": [block, {"type": "text", "text": "b"}], "id": "m4"},
        {"role": "user", "content": "third", "id": "m5"},
    ]


def test_the_models_view_starts_at_the_newest_compaction_block() -> None:
    history = compacted_history()
    offset, view = model_view(history, "compact")
    # A constant user opener (dropped by the API with all before the compaction block) keeps
    # the request user-first.
    assert offset == 2 and view == [OPENER, *history[3:]]
    # Other strategies send no compaction block (a session whose strategy changed).
    _, plain = model_view(history, "trim")
    assert plain[3]["content"] == [{"type": "text", "text": "b"}]
    # The window plans from it, and says where in the stored history the request starts.
    window = ContextWindow(200_000, 1000, strategy=Strategy("compact", 120_000))
    fit = window.fit("s", history, [])
    assert fit.plan.messages[0] == OPENER
    assert fit.plan.messages[1]["content"][0]["type"] == "compaction"
    assert fit.plan.first_kept == 3


def test_every_iteration_is_counted_and_billed() -> None:
    usage = {
        "input_tokens": 300,
        "output_tokens": 50,
        "cache_read_input_tokens": 0,
        "iterations": [
            {"type": "compaction", "input_tokens": 90_000, "output_tokens": 2_000},
            {"type": "message", "input_tokens": 300, "output_tokens": 50},
        ],
    }
    assert billed_usage(usage)["input_tokens"] == 90_300  # type: ignore[index]
    assert usage_tokens(usage) == 92_350
    assert request_input_tokens(usage) == 90_000  # the compaction read the whole request
    shown = summarize([("claude-sonnet-4-5", usage)], price_table())
    assert shown["usage"]["input_tokens"] == 90_300
    assert shown["cost"]["amount"] == "0.301650"  # 90,300 x $3 + 2,050 x $15 per million


def calls(model: ModelClient, window: ContextWindow, timeout: float = 5.0) -> ModelCalls:
    deps = SimpleNamespace(
        window=window,
        tools_sent=lambda: [],
        model=model,
        timings=Timings(count_tokens=timeout),
    )
    return ModelCalls(deps, "turn")  # type: ignore[arg-type]


def long_history(chars: int) -> list[dict[str, Any]]:
    return [{"role": "user", "content": "What did I spend? " + "x" * chars}]


def test_near_the_window_the_apis_count_decides() -> None:
    # The demo model counts a quarter of the JSON bytes: less than the estimate (a third).
    window = ContextWindow(10_000, 1000, overhead=lambda tools: 0)
    fit = window.fit("s", long_history(26_000), [])
    assert fit.near
    transport = Counting(tokens=int(fit.estimate * 0.75))
    chosen = asyncio.run(
        calls(client("trim", transport=transport), window)._fit(
            long_history(26_000), SimpleNamespace(session_id="s"), CONVERSATION, count=True
        )  # type: ignore[arg-type]
    )
    assert transport.asked == 1
    assert chosen.plan.messages == fit.plan.messages and chosen.scale == 1
    # A retry of the same round sends what was counted, without asking again.
    again = asyncio.run(
        calls(client("trim", transport=transport), window)._fit(
            long_history(26_000), SimpleNamespace(session_id="s"), CONVERSATION, count=False
        )  # type: ignore[arg-type]
    )
    assert transport.asked == 1 and again.plan.messages == fit.plan.messages


class Counting(httpx2.AsyncBaseTransport):
    """count_tokens says `tokens`, or fails, or never answers."""

    def __init__(self, tokens: int | None = None, hang: bool = False) -> None:
        self.tokens, self.hang, self.asked = tokens, hang, 0

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        self.asked += 1
        if self.hang:
            await asyncio.sleep(60)  # a server that never answers in time: the scenario
        if self.tokens is None:
            return httpx2.Response(500, json={"type": "error", "error": {"type": "api_error"}})
        return httpx2.Response(200, json={"input_tokens": self.tokens})


def test_a_count_over_the_window_teaches_the_window_and_trims_more() -> None:
    history = [
        {"role": "user", "content": "q1 " + "a" * 12_300},
        {"role": "assistant", "content": "answer one"},
        {"role": "user", "content": "q2 " + "b" * 12_300},
    ]
    window = ContextWindow(10_000, 1000, overhead=lambda tools: 0)
    fit = window.fit("s", history, [])
    assert fit.near and len(fit.plan.messages) == 3
    transport = Counting(tokens=12_000)
    chosen = asyncio.run(
        calls(client("trim", transport=transport), window)._fit(
            history, SimpleNamespace(session_id="s"), CONVERSATION, count=True
        )  # type: ignore[arg-type]
    )
    assert transport.asked == 1
    assert len(chosen.plan.messages) == 1 and chosen.scale > 1
    # Learned like a reported usage: later plans of the session use it too.
    assert window.fit("s", history, []).scale == chosen.scale


@pytest.mark.parametrize(
    "transport", [Counting(None), Counting(hang=True)], ids=["error", "timeout"]
)
def test_when_counting_fails_the_estimate_decides(transport: Counting) -> None:
    window = ContextWindow(10_000, 1000, overhead=lambda tools: 0)
    fit = window.fit("s", long_history(26_000), [])
    chosen = asyncio.run(
        calls(client("trim", transport=transport), window, timeout=0.2)._fit(
            long_history(26_000), SimpleNamespace(session_id="s"), CONVERSATION, count=True
        )  # type: ignore[arg-type]
    )
    assert transport.asked == 1
    assert chosen == fit


def test_far_from_the_window_nothing_is_counted() -> None:
    transport = Counting(tokens=1)
    window = ContextWindow(200_000, 1000, overhead=lambda tools: 0)
    asyncio.run(
        calls(client("trim", transport=transport), window)._fit(
            QUESTION, SimpleNamespace(session_id="s"), CONVERSATION, count=True
        )
    )  # type: ignore[arg-type]
    assert transport.asked == 0

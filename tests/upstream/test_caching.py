"""Prompt-cache placement: where markers go, what stays byte-identical, what is never touched."""

from __future__ import annotations

import copy
import json
from datetime import date
from pathlib import Path
from typing import Any

import anthropic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from config import Settings
from engine.upstream.caching import (
    EXTENDED_TTL_BETA,
    MAX_BREAKPOINTS,
    breakpoints,
    canonical_tools,
    place,
)
from engine.upstream.catalog import DEMO
from engine.upstream.client import ModelClient
from engine.upstream.conversation import Conversation, freeze, outgoing
from engine.upstream.selection import plan
from tests.cachesim.rules import MIN_TOKENS, PromptCache, points, strip
from tools import default_registry

TOOLS = default_registry().definitions()
SYSTEM = [{"type": "text", "text": "static"}, {"type": "text", "text": "Today is 2026-01-01."}]
MARK = {"type": "ephemeral"}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool_use(tool_id: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": "get_account_balances", "input": {}}


def result(tool_id: str, body: str = "{}") -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_id, "content": body}


def marked(blocks: list[Any]) -> list[int]:
    return [i for i, block in enumerate(blocks) if "cache_control" in block]


ROUND_TWO = [
    {"role": "user", "content": "How much do I have?"},
    {"role": "assistant", "content": [text("Checking."), tool_use("t1")]},
    {"role": "user", "content": [result("t1")]},
]


def test_markers_on_static_system_previous_call_end_and_last_message() -> None:
    tools, system, messages = place(TOOLS, SYSTEM, ROUND_TWO, "5m")
    assert marked(tools) == []
    assert marked(system) == [0], "the date block after it stays out of the cached prefix"
    assert messages[0]["content"] == [{**text("How much do I have?"), "cache_control": MARK}]
    assert marked(messages[1]["content"]) == []
    assert marked(messages[2]["content"]) == [0]
    assert breakpoints(tools, system, messages) == 3 <= MAX_BREAKPOINTS


def test_first_call_marks_system_and_the_question() -> None:
    _, system, messages = place(TOOLS, SYSTEM, ROUND_TWO[:1], "5m")
    assert marked(system) == [0] and marked(messages[0]["content"]) == [0]


def test_off_sends_no_markers_and_1h_sets_the_ttl() -> None:
    assert breakpoints(*place(TOOLS, SYSTEM, ROUND_TWO, "off")) == 0
    _, system, messages = place(TOOLS, SYSTEM, ROUND_TWO, "1h")
    controls = [
        b["cache_control"] for b in [*system, *messages[0]["content"]] if "cache_control" in b
    ]
    assert controls == [{"type": "ephemeral", "ttl": "1h"}] * 2


def test_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="off, 5m, 1h"):
        place(TOOLS, SYSTEM, ROUND_TWO, "10m")  # type: ignore[arg-type]


def test_stored_history_is_never_mutated_and_unmarked_blocks_are_shared() -> None:
    history = copy.deepcopy(ROUND_TWO)
    before = copy.deepcopy(history)
    _, _, messages = place(TOOLS, SYSTEM, history, "5m")
    assert history == before
    assert messages[1] is history[1], "an unmarked message is passed through, not copied"
    assert messages[2]["content"][0] is not history[2]["content"][0]


def test_thinking_and_empty_text_are_never_marked() -> None:
    thinking = {"type": "thinking", "thinking": "hmm", "signature": "sig"}
    paused = [ROUND_TWO[0], {"role": "assistant", "content": [text("Part"), text(""), thinking]}]
    _, _, messages = place(TOOLS, SYSTEM, paused, "5m")
    assert marked(messages[1]["content"]) == [0]
    only_thinking = [ROUND_TWO[0], {"role": "assistant", "content": [thinking]}]
    _, _, messages = place(TOOLS, SYSTEM, only_thinking, "5m")
    assert marked(messages[1]["content"]) == []


def test_stray_markers_in_history_are_dropped_so_the_limit_holds() -> None:
    dirty = [
        {**m, "content": [{**b, "cache_control": MARK} for b in m["content"]]}
        if isinstance(m["content"], list)
        else m
        for m in [*ROUND_TWO, {"role": "assistant", "content": [text("a"), text("b")]}]
    ]
    dirty.append({"role": "user", "content": [{**text("next"), "cache_control": MARK}]})
    tools = [{**TOOLS[0], "cache_control": MARK}, *TOOLS[1:]]
    system = [{**SYSTEM[0], "cache_control": MARK}, {**SYSTEM[1], "cache_control": MARK}]
    assert breakpoints(*place(tools, system, dirty, "5m")) == 3
    assert breakpoints(*place(tools, system, dirty, "off")) == 0


def test_tools_are_sent_in_one_order_with_one_key_order() -> None:
    shuffled = [{key: tool[key] for key in reversed(list(tool))} for tool in reversed(TOOLS)]
    assert json.dumps(canonical_tools(shuffled)) == json.dumps(canonical_tools(TOOLS))
    assert [t["name"] for t in canonical_tools(TOOLS)] == sorted(t["name"] for t in TOOLS)


def test_a_new_day_is_a_note_at_the_end_so_the_whole_prefix_survives_it() -> None:
    client = anthropic.Anthropic(api_key="unused", base_url="http://127.0.0.1:9")
    model = ModelClient(client, "m", 100, "You help.", "5m")
    conversation = Conversation(freeze(TOOLS, "You help."), DEMO)

    def request(history: list[dict[str, Any]], day: date) -> tuple[dict[str, Any], Any]:
        sent = outgoing(conversation, plan(history, 1e9), day, TOOLS)
        shape = {"system": conversation.prompt.system, "betas": sent.betas}
        return model.request(sent.messages, conversation.tools(TOOLS), **shape), sent

    question = {"role": "user", "content": "How much do I have?"}
    first, sent = request([question], date(2026, 3, 1))
    assert [b["text"] for b in first["system"]] == ["You help."]
    assert sent.preamble == [{"role": "system", "content": [text("Today is 2026-03-01.")]}]
    answer = {"role": "assistant", "content": [text("1,204.00 USD.")], "preamble": sent.preamble}
    later = [question, answer, {"role": "user", "content": "And now?"}]
    second, sent = request(later, date(2026, 3, 2))
    assert sent.preamble == [{"role": "system", "content": [text("Today is 2026-03-02.")]}]
    assert second["system"] == first["system"] and second["tools"] == first["tools"]
    assert strip(first)["messages"] == strip(second)["messages"][:2], "appended, never edited"
    a, b = points(first), points(second)
    assert a[-1].key == b[len(a) - 1].key, "the first request's whole prompt is read again"
    same = {"role": "assistant", "content": [text("Same.")], "preamble": sent.preamble}
    third, sent = request([*later, same, question], date(2026, 3, 2))
    assert sent.preamble == [], "the same day is told once"
    roles = ["user", "system", "assistant", "user", "system", "assistant", "user"]
    assert [m["role"] for m in strip(third)["messages"]] == roles
    assert "extra_headers" not in first
    model.cache = "1h"
    assert model.request(ROUND_TWO, TOOLS)["extra_headers"] == {"anthropic-beta": EXTENDED_TTL_BETA}


@pytest.mark.parametrize(("value", "mode"), [(None, "5m"), ("OFF", "off"), (" 1h", "1h")])
def test_prompt_cache_setting(
    value: str | None, mode: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    if value is None:
        monkeypatch.delenv("PROMPT_CACHE", raising=False)
    else:
        monkeypatch.setenv("PROMPT_CACHE", value)
    assert Settings.from_env().prompt_cache == mode


def test_an_unknown_prompt_cache_setting_stops_the_start(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PROMPT_CACHE", "2h")
    with pytest.raises(ValueError, match="PROMPT_CACHE must be one of off, 5m, 1h"):
        Settings.from_env()


# A history grows as the runner grows it: per turn a question, tool rounds (assistant calls,
# then a user message of results) and an answer. Rounds may be wider than the 20-block lookback.
Round = tuple[int, int]  # (parallel calls, result size)
TURNS = st.lists(
    st.lists(st.tuples(st.integers(1, 16), st.integers(0, 3000)), max_size=3),
    min_size=1,
    max_size=5,
)


def requests_of(turns: list[list[Round]]) -> list[list[dict[str, Any]]]:
    """Every request's messages for a conversation of `turns`."""
    history: list[dict[str, Any]] = []
    out: list[list[dict[str, Any]]] = []
    for t, rounds in enumerate(turns):
        history.append({"role": "user", "content": f"question {t}"})
        for r, (calls, size) in enumerate(rounds):
            out.append(list(history))
            ids = [f"t{t}_{r}_{k}" for k in range(calls)]
            history.append({"role": "assistant", "content": [tool_use(i) for i in ids]})
            history.append({"role": "user", "content": [result(i, "x" * size) for i in ids]})
        out.append(list(history))
        history.append({"role": "assistant", "content": [text(f"answer {t}")]})
    return out


@settings(max_examples=60, deadline=None)
@given(TURNS)
def test_each_call_reads_everything_the_previous_call_wrote(turns: list[list[Round]]) -> None:
    cache = PromptCache(clock=lambda: 0.0)
    previous = None
    for messages in requests_of(turns):
        tools, system, sent = place(TOOLS, SYSTEM, messages, "5m")
        body = {"model": "m", "tools": tools, "system": system, "messages": sent}
        assert breakpoints(tools, system, sent) <= MAX_BREAKPOINTS
        prompt = points(body)
        usage = cache.apply(body)
        if previous is not None:
            for point in previous:
                if point.ttl:  # the prefix before each old breakpoint is byte-identical now
                    assert point.key in {p.key for p in prompt}
            written = [p.tokens for p in previous if p.ttl and p.tokens >= MIN_TOKENS]
            assert usage.cache_read_input_tokens >= max(written, default=0)
        previous = prompt


def test_the_same_tool_list_is_sorted_once_and_a_new_list_is_sorted_again() -> None:
    tools = copy.deepcopy(TOOLS)
    first = canonical_tools(tools)
    assert canonical_tools(tools) is first  # one server, one list: sorted once
    reordered = list(reversed(copy.deepcopy(TOOLS)))
    reordered[0] = {**reordered[0], "description": "changed"}
    again = canonical_tools(reordered)
    assert again is not first and again != first
    assert [tool["name"] for tool in again] == [tool["name"] for tool in first]
    assert json.dumps(canonical_tools(copy.deepcopy(tools))) == json.dumps(first)
